"""The result table's statistics: Student-t intervals, Holm's correction, verdicts, and
the fold median pruner against completed trials."""

from __future__ import annotations

import math

import numpy as np
import optuna
import pytest
from scipy import stats

from worker.study.pruning import FoldMedianPruner, StudyPruner, critical_finding, curve_step
from worker.study.results import (
    NO_DIFFERENCE,
    ResultRow,
    compare_arms,
    holm,
    mean_interval,
    result_rows,
)


@pytest.mark.parametrize("values", [[0.21, 0.25, 0.23], [0.5, 0.1, 0.3, 0.35, 0.2], [1.0, 3.0]])
def test_confidence_interval_is_scipys_student_t_interval(values) -> None:
    mean, low, high = mean_interval(values)
    expected = stats.t.interval(0.95, len(values) - 1, loc=np.mean(values), scale=stats.sem(values))
    assert mean == pytest.approx(np.mean(values))
    assert (low, high) == pytest.approx(expected, rel=1e-12)


def test_one_value_has_no_interval_and_equal_values_a_point() -> None:
    mean, low, high = mean_interval([0.3])
    assert mean == 0.3 and math.isnan(low) and math.isnan(high)
    assert mean_interval([0.2, 0.2, 0.2]) == pytest.approx((0.2, 0.2, 0.2))


def test_holm_step_down_by_hand() -> None:
    # sorted 0.001·5, 0.01·4, 0.03·3, 0.04·2 (raised to 0.09: monotone), 0.2·1
    assert holm([0.01, 0.04, 0.03, 0.2, 0.001]) == pytest.approx([0.04, 0.09, 0.09, 0.2, 0.005])


def _row(arm: str, values: list[float]) -> ResultRow:
    mean, low, high = mean_interval(values)
    return ResultRow(arm, "separated", "map@r", mean, low, high, len(values), tuple(values))


def test_clearly_separated_arms_differ_and_overlapping_ones_do_not() -> None:
    rows = [
        _row("a", [0.30, 0.31, 0.305, 0.302]),
        _row("b", [0.20, 0.21, 0.205, 0.199]),
        _row("c", [0.20, 0.23, 0.19, 0.215]),
    ]
    verdicts = {(c.arm_a, c.arm_b): c for c in compare_arms(rows)}
    assert verdicts[("a", "b")].verdict == "a better"
    raw = {
        pair: stats.ttest_ind(rows[i].values, rows[j].values, equal_var=False).pvalue
        for pair, (i, j) in {("a", "b"): (0, 1), ("a", "c"): (0, 2), ("b", "c"): (1, 2)}.items()
    }
    expected = dict(zip(raw, holm(list(raw.values())), strict=True))
    for pair, comparison in verdicts.items():
        assert comparison.p_holm == pytest.approx(expected[pair], rel=1e-9)
    assert verdicts[("b", "c")].verdict == NO_DIFFERENCE
    assert verdicts[("b", "c")].difference == pytest.approx(rows[1].mean - rows[2].mean)


def test_rows_per_arm_evaluation_and_metric() -> None:
    rows = result_rows({"a": {"concatenated": {"map@r": [0.1, 0.2, 0.3], "precision@1": [0.5]}}})
    assert [(r.arm, r.evaluation, r.metric, r.n) for r in rows] == [
        ("a", "concatenated", "precision@1", 1),
        ("a", "concatenated", "map@r", 3),
    ]


def _trial_with_curve(study: optuna.Study, fold_curves: dict[int, list[float]]) -> optuna.Trial:
    trial = study.ask()
    for fold, curve in fold_curves.items():
        for index, value in enumerate(curve):
            trial.report(value, curve_step(fold, 10 * (index + 1)))
    return trial


def test_fold_median_pruner_compares_the_same_fold_and_step() -> None:
    pruner = StudyPruner(FoldMedianPruner(warmup_trials=2, warmup_evaluations=1), None)
    study = optuna.create_study(direction="maximize", pruner=pruner)
    for curve in ([0.2, 0.4], [0.3, 0.5], [0.1, 0.6]):
        trial = _trial_with_curve(study, {0: curve})
        study.tell(trial, curve[-1])
    # fold 0 step 20: median of 0.4, 0.5, 0.6 is 0.5
    below = _trial_with_curve(study, {0: [0.9, 0.45]})
    assert below.should_prune()
    above = _trial_with_curve(study, {0: [0.0, 0.55]})
    assert not above.should_prune()
    warming = _trial_with_curve(study, {0: [0.0]})  # one evaluation: still warming up
    assert not warming.should_prune()
    # fold 1's curve is compared with fold 1's values only (none completed there yet)
    other_fold = _trial_with_curve(study, {1: [0.0, 0.0]})
    assert not other_fold.should_prune()


def test_critical_finding_gives_its_reason() -> None:
    from sphere_engine.findings.finding import Detection, Severity

    warn = Detection("x", "Warn", Severity("warning"), "m", None, None, "", ())
    crit = Detection(
        "diverged", "Training diverged", Severity.CRITICAL, "loss nan", 300, 300, "", ()
    )
    assert critical_finding([warn], steps=400) is None
    assert critical_finding([warn, crit], steps=400) == "Training diverged: loss nan"
    # a loss quiet from step 751 of 1500 has learnt its batches; from step 5 it never trained
    late = Detection("dead_loss", "Dead loss", Severity.CRITICAL, "none active", 751, 1500, "", ())
    early = Detection("dead_loss", "Dead loss", Severity.CRITICAL, "none active", 5, 1500, "", ())
    assert critical_finding([late], steps=1500) is None
    assert critical_finding([late, early], steps=1500) == "Dead loss: none active"
    # the form a run's worker stores at its end reads the same
    stored = [d.to_dict() for d in (warn, late, early)]
    assert critical_finding(stored, steps=1500) == "Dead loss: none active"
    assert critical_finding(stored[:2], steps=1500) is None


def test_the_table_renders_as_markdown_csv_and_json() -> None:
    import csv
    import io
    import json

    from worker.study.report import render
    from worker.study.results import StudyResults
    from worker.study.spec import parse_spec

    spec = parse_spec({
        "name": "t", "folds": 2, "trials": 2,
        "arms": {"a": {"set": {}, "space": {}}, "b": {"set": {}, "space": {}}},
    })  # fmt: skip
    rows = result_rows({
        "a": {"separated": {"map@r": [0.30, 0.31, 0.305]}},
        "b": {"separated": {"map@r": [0.20, 0.21, 0.205]}},
    })  # fmt: skip
    results = StudyResults("t-1", spec, rows=rows, comparisons=compare_arms(rows),
                           best={"a": {"optimizer.lr": 0.01}})  # fmt: skip
    text = render(results, "md")
    mean, low, high = mean_interval([0.30, 0.31, 0.305])
    assert f"| a | 3 | – | – | {100 * mean:.2f} ± {100 * (high - low) / 2:.2f} |" in text
    assert "| separated | MAP@R | a vs b | +10.00 |" in text
    table = list(csv.DictReader(io.StringIO(render(results, "csv"))))
    assert [(r["arm"], r["metric"], r["n"]) for r in table] == [
        ("a", "map@r", "3"),
        ("b", "map@r", "3"),
    ]
    assert json.loads(table[0]["best_setting"]) == {"optimizer.lr": 0.01}
    data = json.loads(render(results, "json"))
    assert data["rows"][0]["ci_low"] == pytest.approx(low)
    assert data["comparisons"][0]["verdict"] == "a better"
