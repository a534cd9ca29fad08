"""sphere_engine.experiments.verdicts: the one verdict of the Report page and
``spherescope report`` — "agrees" only when the seeds can tell."""

from __future__ import annotations

import pandas as pd
import pytest

from sphere_engine.experiments import Claim, Comparison, Experiment, Metric, Variant
from sphere_engine.experiments.verdicts import INCONCLUSIVE, check_claims, judge

R1 = Metric("recall@1", "R@1", percent=True)
VAR = Metric("train_mean:norm/var", "train norm var")
VALUES = pd.DataFrame(
    {
        "variant": ["a", "a", "a", "b", "b", "b"],
        "seed": [0, 1, 2, 0, 1, 2],
        "recall@1": [0.80, 0.82, 0.84, 0.90, 0.91, 0.95],
        "train_mean:norm/var": [3.0, 2.0, 1.0, 0.5, 0.5, 0.2],
    }
)


def _experiment(*claims: Claim) -> Experiment:
    variants = (Variant("a"), Variant("b"), Variant("sec"), Variant("none"))
    return Experiment("toy", "toy", "", {}, variants, (R1, VAR), claims=claims)


def _r1(sec: list[float], none: list[float]) -> pd.DataFrame:
    rows = [("sec", v) for v in sec] + [("none", v) for v in none]
    return pd.DataFrame(rows, columns=["variant", "recall@1"])


LIFTS = Claim("SEC lifts R@1", (Comparison("recall@1", "sec", "none", ">"),))


def test_claims_agree_disagree_are_inconclusive_or_not_measured() -> None:
    experiment = _experiment(
        Claim("b beats a", (Comparison("recall@1", "b", "a"),)),
        Claim("a beats b", (Comparison("recall@1", "a", "b"),)),
        Claim("b's variance is closer to 1", (Comparison(VAR.key, "b", "a", "<", distance_to=1),)),
        Claim("about equal", (Comparison("recall@1", "a", "b", "≈", tolerance=5.0),)),
        Claim("probe", (Comparison("linear_probe/accuracy", "b", "a"),)),
        Claim("positive", (Comparison(VAR.key, "a", 0.0),)),
        Claim("no worse", (Comparison("recall@1", "a", "b", "≥", tolerance=10.0),)),
        Claim("worse", (Comparison("recall@1", "a", "b", "≥", tolerance=9.0),)),
    )
    verdicts = [v.verdict for v in check_claims(experiment, VALUES)]
    # |b − 1| = 0.6 ± 0.17 vs |a − 1| = 1 ± 1: inside one std; |82 − 92| = 10 points > 5;
    # 82 ≥ 92 − 10, not 92 − 9; a's variance 2 ± 1 is more than one std above 0
    assert verdicts == [
        "agrees", "disagrees", INCONCLUSIVE, "disagrees", "not measured", "agrees", "agrees",
        "disagrees",
    ]  # fmt: skip


def test_one_seed_a_side_is_inconclusive_not_agreement() -> None:
    verdict = judge(_experiment(), LIFTS, _r1([0.8], [0.7]))
    assert verdict.verdict == INCONCLUSIVE
    assert "(n = 1)" in verdict.detail and "one seed a side" in verdict.detail


def test_a_difference_inside_one_std_is_inconclusive() -> None:
    verdict = judge(_experiment(), LIFTS, _r1([0.80, 0.70, 0.90], [0.78, 0.68, 0.88]))
    assert verdict.verdict == INCONCLUSIVE
    (found,) = verdict.evidence
    assert not found.conclusive and found.effect == pytest.approx(0.2, abs=0.01)
    assert "within one std" in verdict.detail


def test_a_clear_difference_agrees_with_its_effect_size_and_test() -> None:
    verdict = judge(_experiment(), LIFTS, _r1([0.85, 0.86, 0.84], [0.70, 0.71, 0.69]))
    assert verdict.verdict == "agrees"
    (found,) = verdict.evidence
    assert found.effect > 10 and found.p_value < 0.01
    assert "sec 85.0 ± 1.00 (n = 3) > none 70.0 ± 1.00 (n = 3)? yes; d = " in verdict.detail


def test_a_clear_difference_the_wrong_way_disagrees() -> None:
    verdict = judge(_experiment(), LIFTS, _r1([0.70, 0.71, 0.69], [0.85, 0.86, 0.84]))
    assert verdict.verdict == "disagrees"
