"""Evaluation trends: overfitting, and an evaluation that stopped moving."""

from __future__ import annotations

import pandas as pd

from sphere_engine.catalogue.metric import Source
from sphere_engine.findings.finding import Hit, Severity
from sphere_engine.findings.registry import register_finding
from sphere_engine.findings.rules.loss_activity import dead_loss
from sphere_engine.findings.run_series import RunSeries
from sphere_engine.findings.trends import (
    DROP,
    SERIOUS_DROP,
    TREND_METRICS,
    finite,
    fmt,
    trend_metric,
)

TRAIN, EVAL = Source.TRAINING_BATCH, Source.EVALUATION

# The training loss must have fallen ≥ 5 % over the span the evaluation fell. A fall of
# five points or more is a warning; less (3–5 points on a few hundred test queries, the
# SEC ablation's L2 arm) is worth knowing.
LOSS_FALL = 0.95
# Flat: less than half a point of range over the last half of the run.
FLAT_RANGE = 0.005


def _loss_near(loss: pd.Series, step: int) -> float:
    """Median training loss over the logged steps nearest ``step`` (batches are noisy)."""
    position = int(loss.index.searchsorted(step))
    window = loss.iloc[max(position - 5, 0) : position + 5]
    return float(window.median())


@register_finding(
    title="Overfitting: evaluation falls while the training loss falls",
    worst=Severity.WARNING,
    explanation=(
        "The evaluation metric peaked and has fallen since, while the training loss kept "
        "falling: the model fits the training classes at the expense of the test classes. "
        "In metric learning with class-disjoint splits this shows early (Musgrave et al. "
        "2020, 'A Metric Learning Reality Check', report test accuracy peaking well before "
        "the end of training), so the best checkpoint, not the last, is the result."
    ),
    paper="Musgrave et al., A Metric Learning Reality Check, ECCV 2020",
    evidence=((EVAL, "recall@1"), (TRAIN, "loss/total")),
    reads=tuple((EVAL, key) for key in TREND_METRICS[1:]),
    action="Keep the best checkpoint (early stopping), add augmentation or weight decay, or "
    "lower the learning rate after the peak.",
)
def overfitting(run: RunSeries) -> Hit | None:
    key, evaluation = trend_metric(run)
    loss = finite(run.series("loss/total"))
    if len(evaluation) < 3 or loss.empty:
        return None
    best_step = int(evaluation.idxmax())
    best, last = float(evaluation.max()), float(evaluation.iloc[-1])
    last_step = int(evaluation.index[-1])
    if best_step == last_step or best - last < DROP:
        return None
    loss_at_best, loss_at_last = _loss_near(loss, best_step), _loss_near(loss, last_step)
    if not loss_at_last < LOSS_FALL * loss_at_best:
        return None
    if loss_at_last == 0.0 and dead_loss.check(run) is not None:
        return None  # a fall once the loss is exactly 0: the dead-loss finding says why
    return Hit(
        f"{key} fell from {fmt(best)} (step {best_step}) to {fmt(last)} (step {last_step}) "
        f"while the training loss fell from {fmt(loss_at_best)} to {fmt(loss_at_last)}",
        best_step,
        last_step,
        severity=Severity.WARNING if best - last >= SERIOUS_DROP else Severity.INFO,
    )


@register_finding(
    title="Evaluation flat for the last half of the run",
    worst=Severity.INFO,
    explanation=(
        "The evaluation metric has not moved over the second half of training: the run "
        "converged (or stalled) halfway, and the remaining steps bought nothing. A "
        "learning-rate schedule that decays earlier, or a run half as long, gives the same "
        "result for half the compute (Musgrave et al. 2020 compare methods at their best "
        "validation step for this reason)."
    ),
    paper="Musgrave et al., A Metric Learning Reality Check, ECCV 2020",
    evidence=((EVAL, "recall@1"),),
    reads=tuple((EVAL, key) for key in TREND_METRICS[1:]),
    action="Stop earlier, decay the learning rate sooner, or change what limits the run "
    "(data, model size, loss).",
)
def flat_evaluation(run: RunSeries) -> Hit | None:
    key, evaluation = trend_metric(run)
    if len(evaluation) < 4:
        return None
    first, last = int(evaluation.index[0]), int(evaluation.index[-1])
    second_half = evaluation[evaluation.index >= first + (last - first) / 2]
    if len(second_half) < 3:
        return None
    low, high = float(second_half.min()), float(second_half.max())
    if high - low >= FLAT_RANGE:
        return None
    level = (
        f"at {low:.3f}" if f"{low:.3f}" == f"{high:.3f}" else f"between {low:.3f} and {high:.3f}"
    )
    return Hit(
        f"{key} stayed {level} from step {int(second_half.index[0])} to {last}",
        int(second_half.index[0]),
        last,
        severity=Severity.INFO,
    )
