"""The result table of a study: per arm, the reproductions' test metrics as mean and 95 %
confidence interval (Student t over the reproductions), the best setting, and pairwise
Welch's t-tests with Holm's correction (MLRC's reporting, SCIENCE.md §9).

With folds a reproduction has two test evaluations: *separated* (the mean of its k fold
models' test metrics) and *concatenated* (the k models' embeddings concatenated); with
one fold it has one, ``test`` (its run's last evaluation on the test split).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

from db.store import RunStore
from sphere_engine.catalogue.facts import FINAL_TEST_PREFIX
from worker.study import storage
from worker.study.runs import StudyRun, reproduction_folds, study_runs
from worker.study.spec import RETRIEVAL_METRICS, StudySpec

#: The metrics of the table, MLRC's three.
TABLE_METRICS = ("precision@1", "r_precision", "map@r")
CONFIDENCE = 0.95
ALPHA = 0.05
NO_DIFFERENCE = "no detectable difference"


def mean_interval(
    values: Sequence[float], confidence: float = CONFIDENCE
) -> tuple[float, float, float]:
    """(mean, low, high): the Student-t interval of the mean (``scipy.stats.t.interval``
    with n - 1 degrees of freedom and the standard error); one value: (v, nan, nan)."""
    array = np.asarray(values, dtype=float)
    mean = float(array.mean())
    if len(array) < 2:
        return mean, math.nan, math.nan
    sem = float(array.std(ddof=1) / math.sqrt(len(array)))
    if sem == 0.0:
        return mean, mean, mean
    from scipy import stats  # on use: a coordinator and ``study status`` never need it

    low, high = stats.t.interval(confidence, len(array) - 1, loc=mean, scale=sem)
    return mean, float(low), float(high)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (monotone, capped at 1), in the input's order."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [0.0] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        value = min(1.0, (len(p_values) - rank) * p_values[index])
        running = max(running, value)
        adjusted[index] = running
    return adjusted


@dataclass(frozen=True)
class ResultRow:
    arm: str
    evaluation: str  # separated, concatenated or test
    metric: str
    mean: float
    ci_low: float
    ci_high: float
    n: int
    values: tuple[float, ...]


@dataclass(frozen=True)
class Comparison:
    evaluation: str
    metric: str
    arm_a: str
    arm_b: str
    difference: float  # mean a - mean b
    t: float
    p: float
    p_holm: float
    verdict: str


@dataclass
class StudyResults:
    study_id: str
    spec: StudySpec
    rows: list[ResultRow] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    best: dict[str, dict[str, Any]] = field(default_factory=dict)  # arm → params
    best_value: dict[str, float] = field(default_factory=dict)
    trials: dict[str, dict[str, int]] = field(default_factory=dict)  # arm → state → count
    reproductions_done: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "study_id": self.study_id,
            "name": self.spec.name,
            "experiment": self.spec.experiment,
            "metric": self.spec.metric,
            "budget": self.spec.trials,
            "folds": self.spec.folds,
            "reproductions": self.spec.reproductions,
            "trials": self.trials,
            "best": self.best,
            "best_value": self.best_value,
            "reproductions_done": self.reproductions_done,
            "rows": [_plain(row.__dict__) for row in self.rows],
            "comparisons": [_plain(c.__dict__) for c in self.comparisons],
        }


def _plain(values: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in values.items():
        if isinstance(value, float) and not math.isfinite(value):
            value = None
        elif isinstance(value, tuple):
            value = list(value)
        out[key] = value
    return out


def _verdict(row_a: ResultRow, row_b: ResultRow, p_holm: float) -> str:
    overlap = not (row_a.ci_high < row_b.ci_low or row_b.ci_high < row_a.ci_low)
    if any(math.isnan(x) for x in (row_a.ci_low, row_b.ci_low)) or overlap or p_holm >= ALPHA:
        return NO_DIFFERENCE
    return f"{row_a.arm} better" if row_a.mean > row_b.mean else f"{row_b.arm} better"


def welch(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """Welch's t statistic and two-sided p (nan with fewer than 2 values a side)."""
    if len(a) < 2 or len(b) < 2:
        return math.nan, math.nan
    if np.std(a, ddof=1) == 0 and np.std(b, ddof=1) == 0:
        return (0.0, 1.0) if np.mean(a) == np.mean(b) else (math.inf, 0.0)
    from scipy import stats

    result = stats.ttest_ind(a, b, equal_var=False)
    return float(result.statistic), float(result.pvalue)


def compare_arms(rows: Sequence[ResultRow]) -> list[Comparison]:
    """Every pair of arms on each (evaluation, metric), Holm-corrected within each."""
    out = []
    groups: dict[tuple[str, str], list[ResultRow]] = {}
    for row in rows:
        groups.setdefault((row.evaluation, row.metric), []).append(row)
    for (evaluation, metric), group in groups.items():
        pairs = list(combinations(group, 2))
        tests = [welch(a.values, b.values) for a, b in pairs]
        raw = [1.0 if math.isnan(p) else p for _, p in tests]
        adjusted = holm(raw) if raw else []
        for (a, b), (t, p), p_holm in zip(pairs, tests, adjusted, strict=True):
            out.append(
                Comparison(evaluation, metric, a.arm, b.arm, a.mean - b.mean, t, p, p_holm,
                           _verdict(a, b, p_holm))
            )  # fmt: skip
    return out


# -- reading the reproductions ---------------------------------------------------------
def test_metric_name(metric: str) -> str:
    """The key of ``metric`` in a run's final test evaluation (``test/map@r``)."""
    return FINAL_TEST_PREFIX + metric


def _last_values(
    store: RunStore, run_ids: list[str], names: list[str]
) -> dict[str, dict[str, float]]:
    from db import queries

    frame = queries.eval_series(store, run_ids, names)
    out: dict[str, dict[str, float]] = {}
    for run_id, name, value in zip(frame["run_id"], frame["name"], frame["value"], strict=True):
        out.setdefault(run_id, {})[name] = float(value)  # sorted by step: the last wins
    return out


def reproduction_values(
    store: RunStore, spec: StudySpec, runs: list[StudyRun], study_id: str
) -> dict[str, dict[str, dict[str, list[float]]]]:
    """arm → evaluation → metric → one value per finished reproduction (concatenated:
    once the coordinator has evaluated the joined embeddings)."""
    from worker.study.concatenated import stored

    folds = reproduction_folds(spec)
    by_repro: dict[tuple[str, int], dict[int, StudyRun]] = {}
    for run in runs:
        if run.repro is not None and run.record.status == "finished":
            by_repro.setdefault((run.arm, run.repro), {})[run.fold] = run
    out: dict[str, dict[str, dict[str, list[float]]]] = {}
    for (arm, repro), fold_runs in sorted(by_repro.items()):
        if len(fold_runs) < folds:
            continue
        ids = [fold_runs[f].record.run_id for f in range(folds)]
        arm_values = out.setdefault(arm, {})
        if spec.folds == 1:
            last = _last_values(store, ids, list(TABLE_METRICS))
            for metric in TABLE_METRICS:
                if metric in last.get(ids[0], {}):
                    arm_values.setdefault("test", {}).setdefault(metric, []).append(
                        last[ids[0]][metric]
                    )
            continue
        names = [test_metric_name(m) for m in TABLE_METRICS]
        last = _last_values(store, ids, names)
        for metric, name in zip(TABLE_METRICS, names, strict=True):
            per_fold = [last.get(run_id, {}).get(name) for run_id in ids]
            if all(v is not None for v in per_fold):
                arm_values.setdefault("separated", {}).setdefault(metric, []).append(
                    float(np.mean(per_fold))
                )
        joined = stored(store.home, study_id, arm, repro) or {}
        for metric in TABLE_METRICS:
            if metric in joined:
                arm_values.setdefault("concatenated", {}).setdefault(metric, []).append(
                    joined[metric]
                )
    return out


def result_rows(values: dict[str, dict[str, dict[str, list[float]]]]) -> list[ResultRow]:
    rows = []
    for arm, evaluations in values.items():
        for evaluation, metrics in evaluations.items():
            for metric in TABLE_METRICS:
                if metrics.get(metric):
                    mean, low, high = mean_interval(metrics[metric])
                    rows.append(
                        ResultRow(arm, evaluation, metric, mean, low, high, len(metrics[metric]),
                                  tuple(metrics[metric]))
                    )  # fmt: skip
    return rows


def study_trials(home: str | os.PathLike[str], study_id: str) -> StudyResults:
    """The study's trials by state and each arm's best setting, from its journal alone
    (no table: what ``study status`` and a finishing coordinator print)."""
    import optuna
    from optuna.trial import TrialState

    spec = storage.load_study_spec(home, study_id)
    results = StudyResults(study_id, spec)
    journal = storage.journal_storage(home, study_id)
    for arm in spec.arms:
        name = storage.arm_study_name(study_id, arm.name)
        try:
            study = optuna.load_study(study_name=name, storage=journal)
        except KeyError:
            results.trials[arm.name] = {}
            continue
        trials = study.get_trials(deepcopy=False)
        counts: dict[str, int] = {}
        for trial in trials:
            counts[trial.state.name.lower()] = counts.get(trial.state.name.lower(), 0) + 1
        results.trials[arm.name] = counts
        if any(t.state == TrialState.COMPLETE for t in trials):
            results.best[arm.name] = dict(study.best_trial.params)
            results.best_value[arm.name] = float(study.best_value)
    return results


def study_results(
    home: str | os.PathLike[str],
    study_id: str,
    *,
    store: RunStore | None = None,
) -> StudyResults:
    """The study's table as its journal and its runs hold it now (live while it runs)."""
    results = study_trials(home, study_id)
    spec = results.spec
    store = store or RunStore(home)
    runs = study_runs(store, study_id)
    values = reproduction_values(store, spec, runs, study_id)
    for arm in spec.arms:
        per = values.get(arm.name, {})
        first = next(iter(per.values()), {})
        results.reproductions_done[arm.name] = max((len(v) for v in first.values()), default=0)
    results.rows = result_rows(values)
    results.comparisons = compare_arms(results.rows)
    return results


def study_for_experiment(home: str | os.PathLike[str], experiment: str) -> str | None:
    """The newest study declared for ``experiment`` (its ``experiment`` key), or None."""
    for study_id in reversed(storage.list_study_ids(home)):
        try:
            spec = storage.load_study_spec(home, study_id)
        except ValueError:
            continue
        if spec.experiment == experiment:
            return study_id
    return None


__all__ = [
    "RETRIEVAL_METRICS",
    "Comparison",
    "ResultRow",
    "StudyResults",
    "compare_arms",
    "holm",
    "mean_interval",
    "study_for_experiment",
    "study_results",
]
