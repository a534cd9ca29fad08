"""Stopping hopeless trials early, as Optuna pruners over a trial's reported values.

A trial reports each fold's validation curve under keys ``curve_step(fold, step)`` and
each finished fold's value under the key ``fold`` (0 … k-1), so two pruners read one
trial:
- ``FoldMedianPruner``: a fold whose latest validation value is below the median of the
  same fold of the completed trials at the same evaluation step (after a warm-up of
  completed trials and of the fold's own evaluations);
- Optuna's ``WilcoxonPruner`` over the finished folds' values against the best trial's
  (with k ≥ 5 folds: a signed-rank test needs that many pairs to say anything).
A run that raises a critical finding (diverged, dead loss, collapse) is pruned at once by
the coordinator with the finding as its reason (``critical_finding``).
"""

from __future__ import annotations

import copy
import statistics
from collections.abc import Iterable, Mapping
from typing import Any

import optuna
from optuna.pruners import BasePruner, WilcoxonPruner
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

#: Curve keys of fold f start at (f + 1) × STRIDE; a run has at most 10⁷ steps.
STRIDE = 100_000_000


def curve_step(fold: int, step: int) -> int:
    return (fold + 1) * STRIDE + step


def split_key(key: int) -> tuple[int, int] | None:
    """(fold, step) of a curve key; None for a fold's final value."""
    return None if key < STRIDE else (key // STRIDE - 1, key % STRIDE)


def fold_values(trial: FrozenTrial) -> dict[int, float]:
    return {k: v for k, v in trial.intermediate_values.items() if k < STRIDE}


class FoldMedianPruner(BasePruner):
    """Prune when the trial's last curve point is worse than the median of the completed
    trials' values of the same fold at the same step."""

    def __init__(self, warmup_trials: int = 3, warmup_evaluations: int = 1) -> None:
        self.warmup_trials = warmup_trials
        self.warmup_evaluations = warmup_evaluations

    def prune(self, study: optuna.Study, trial: FrozenTrial) -> bool:
        curve = sorted(k for k in trial.intermediate_values if k >= STRIDE)
        if not curve:
            return False
        last = curve[-1]
        fold, _ = split_key(last)  # type: ignore[misc]
        evaluations = sum(1 for k in curve if k // STRIDE == fold + 1)
        if evaluations <= self.warmup_evaluations:
            return False
        completed = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        if len(completed) < max(self.warmup_trials, 1):
            return False
        others = [t.intermediate_values[last] for t in completed if last in t.intermediate_values]
        if not others:
            return False
        median = statistics.median(others)
        value = trial.intermediate_values[last]
        if study.direction == StudyDirection.MAXIMIZE:
            return value < median
        return value > median


class _FoldView:
    """The parts of a study ``WilcoxonPruner`` reads, with trials reduced to their fold
    values (the curves are the median pruner's)."""

    def __init__(self, study: optuna.Study) -> None:
        self.direction = study.direction
        self._study = study

    @property
    def best_trial(self) -> FrozenTrial:
        return _folds_only(self._study.best_trial)


def _folds_only(trial: FrozenTrial) -> FrozenTrial:
    reduced = copy.copy(trial)
    reduced.intermediate_values = fold_values(trial)
    return reduced


class StudyPruner(BasePruner):
    """The study's pruner: the fold median on curves and, with ``wilcoxon``, Optuna's
    Wilcoxon pruner across finished folds."""

    def __init__(self, median: FoldMedianPruner | None, wilcoxon: WilcoxonPruner | None) -> None:
        self.median, self.wilcoxon = median, wilcoxon

    def prune(self, study: optuna.Study, trial: FrozenTrial) -> bool:
        if self.median is not None and self.median.prune(study, trial):
            return True
        if self.wilcoxon is not None and fold_values(trial):
            return self.wilcoxon.prune(_FoldView(study), _folds_only(trial))  # type: ignore[arg-type]
        return False

    def reason(self, study: optuna.Study, trial: FrozenTrial) -> str:
        """Why ``prune`` said yes, in words for the Study page."""
        if self.median is not None and self.median.prune(study, trial):
            last = max(k for k in trial.intermediate_values if k >= STRIDE)
            fold, step = split_key(last)  # type: ignore[misc]
            value = trial.intermediate_values[last]
            return (
                f"fold {fold} at step {step}: {value:.4g} is below the median of the "
                "completed trials' same fold and step"
            )
        return "Wilcoxon signed-rank test across folds: worse than the best trial"


def build_pruner(
    median: bool, warmup_trials: int, warmup_evaluations: int, wilcoxon_p: float | None
) -> StudyPruner:
    return StudyPruner(
        FoldMedianPruner(warmup_trials, warmup_evaluations) if median else None,
        WilcoxonPruner(p_threshold=wilcoxon_p) if wilcoxon_p is not None else None,
    )


#: A loss that goes quiet this late in a run has learnt its training batches (an easy
#: dataset): only a loss dead from the start says the setting does not train.
DEAD_FROM_THE_START = 0.1


def critical_finding(findings: Iterable[Any], steps: int) -> str | None:
    """The reason (``"Training diverged: ..."``) of the first critical finding that says
    the run does not train: diverged or collapsed at any point, a dead loss from the
    start (within the first tenth of ``steps``); None otherwise. ``findings`` are
    ``Detection``s or their stored form (``Detection.to_dict``)."""
    for finding in findings:
        data = finding if isinstance(finding, Mapping) else finding.to_dict()
        if data.get("severity") != "critical":
            continue
        start = data.get("step_start")
        if (
            data.get("name") == "dead_loss"
            and start is not None
            and start > DEAD_FROM_THE_START * steps
        ):
            continue
        return f"{data.get('title')}: {data.get('message')}"
    return None
