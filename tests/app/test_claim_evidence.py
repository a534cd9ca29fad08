"""The Report's claims: "agrees" only when the seeds can tell (issue 27 item 7)."""

from __future__ import annotations

import pandas as pd
import pytest

from app.panels.claim_evidence import INCONCLUSIVE, judged
from sphere_engine.experiments.spec import Claim, Comparison

CLAIM = Claim("SEC lifts R@1", (Comparison("r1", "sec", "none", ">"),))


def _values(sec: list[float], none: list[float]) -> pd.DataFrame:
    rows = [("sec", v) for v in sec] + [("none", v) for v in none]
    return pd.DataFrame(rows, columns=["variant", "r1"])


def test_one_seed_a_side_is_inconclusive_not_agreement():
    verdict, (found,) = judged("agrees", CLAIM, _values([0.8], [0.7]), {"r1": 100.0})
    assert verdict == INCONCLUSIVE
    assert "(n = 1)" in found.text()


def test_a_difference_inside_one_std_is_inconclusive():
    values = _values([0.80, 0.70, 0.90], [0.78, 0.68, 0.88])
    verdict, (found,) = judged("agrees", CLAIM, values, {"r1": 100.0})
    assert verdict == INCONCLUSIVE and not found.conclusive
    assert found.effect == pytest.approx(0.2, abs=0.01)  # 2 points over a 10-point std


def test_a_clear_difference_agrees_with_its_effect_size_and_test():
    values = _values([0.85, 0.86, 0.84], [0.70, 0.71, 0.69])
    verdict, (found,) = judged("agrees", CLAIM, values, {"r1": 100.0})
    assert verdict == "agrees" and found.conclusive
    assert found.effect > 10 and found.p_value < 0.01
    assert "sec 85 ± 1 (n = 3)" in found.text() and "Welch p" in found.text()
