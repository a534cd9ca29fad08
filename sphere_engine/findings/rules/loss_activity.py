"""Dead loss: no active pairs or triplets, so nothing is learnt."""

from __future__ import annotations

import pandas as pd

from sphere_engine.catalogue.metric import Source
from sphere_engine.findings.finding import Hit, Severity
from sphere_engine.findings.registry import register_finding
from sphere_engine.findings.run_series import RunSeries
from sphere_engine.findings.trends import (
    SERIOUS_DROP,
    TREND_READS,
    at_step,
    fmt,
    longest_run,
    trend_metric,
)

TRAIN = Source.TRAINING_BATCH

# A zero loss now and then is a batch the miner found easy; a quarter of the logged
# steps in a row (and at least a few) is a run that stopped learning.
MIN_DEAD_POINTS = 3
MIN_DEAD_FRACTION = 0.25
# Dead from the start: the stretch begins within the first 5 % of the logged steps and
# the evaluation never moved by more than rounding (a run whose weights never moved).
START_SHARE = 0.05
STILL_RANGE = 0.002
# Or dead most of the time over the second half, with a rare non-zero batch between.
MOSTLY_DEAD = 0.8


@register_finding(
    title="Dead loss: no active pairs or triplets",
    worst=Severity.CRITICAL,
    explanation=(
        "Its severity follows the evidence: dead from the first logged step, the run never "
        "learned (critical); dead after the loss had been active, the miner ran out of "
        "pairs once the training batches were separated, which is expected late in a "
        "run (info) unless the evaluation falls with it (warning). With Adam the weights "
        "keep moving after the loss reaches 0: its first moment decays by 0.9 a step while "
        "its second decays by 0.999, so each rare batch with an active triplet is followed "
        "by about ten more steps in its direction. On the default Launch config (digits, "
        "4,000 steps) 78 % of the weight movement after the loss reached 0 came from "
        "zero-loss steps, and Recall@1 fell from 0.923 to 0.814; with the weights held on "
        "zero-loss steps it ended at 0.934 (scripts/zero_loss_updates.py). "
        "The metric loss was exactly zero (or the miner returned no pair or triplet) for "
        "a long stretch of steps. A margin-based loss only learns from the pairs that "
        "violate its margin; when the miner finds none, the gradient is zero and the run "
        "only spends compute. Semi-hard mining is the classic case: once every negative is "
        "farther than the positive plus the margin, there are no semi-hard triplets left "
        "(Schroff et al. 2015, FaceNet, §3.2; Wu et al. 2017, 'Sampling Matters')."
    ),
    paper="Schroff et al., FaceNet, CVPR 2015; Wu et al., Sampling Matters in Deep Embedding "
    "Learning, ICCV 2017",
    evidence=((TRAIN, "loss/metric"), (TRAIN, "mining/active_fraction")),
    reads=((TRAIN, "loss/total"), *TREND_READS),
    action="Use harder mining (batch-hard), larger batches (more negatives per anchor) or a "
    "larger margin, or a loss that weighs every pair (multi-similarity, N-pair); check that "
    "batches hold several samples per class. If the evaluation falls once the loss is 0, "
    "keep the best checkpoint (training.keep_checkpoints) or stop early "
    "(training.early_stop_patience).",
)
def dead_loss(run: RunSeries) -> Hit | None:
    # a step is dead when its loss is 0: a downsampled bucket only when all its steps were
    loss = run.peak("loss/metric")
    if loss.empty:
        loss = run.peak("loss/total")
    active = run.peak("mining/active_fraction")
    dead = loss == 0.0
    what = "metric loss exactly 0"
    if not active.empty:
        steps = loss.index.union(active.index)
        dead = (active == 0.0).reindex(steps, fill_value=False) | dead.reindex(
            steps, fill_value=False
        )
        what = "no active pairs or triplets"
    span = _dead_span(dead)
    if span is None:
        return None
    first, last = span
    share = float(dead.loc[first:last].mean())
    amount = (
        f"at every logged step from {first} to {last}"
        if share == 1.0
        else f"in {share:.0%} of the logged steps {first}–{last}"
    )
    key, evaluation = trend_metric(run)
    moved = len(evaluation) >= 2 and float(evaluation.max() - evaluation.min()) >= STILL_RANGE
    if int(dead.index.searchsorted(first)) <= max(2, START_SHARE * len(dead)) and not moved:
        # dead from the start and the evaluation never moved: the weights did not either
        still = f"; {key} stayed at {evaluation.iloc[-1]:.3f}" if len(evaluation) else ""
        return Hit(
            f"{what} {amount}, from {at_step(dead, first)}: the run never learned{still}",
            first,
            last,
            severity=Severity.CRITICAL,
        )
    if len(evaluation) >= 2 and float(evaluation.max() - evaluation.iloc[-1]) >= SERIOUS_DROP:
        adam = str(run.config_value("optimizer.name", "")).startswith("adam")
        why = (
            ": the weights kept moving without a loss, as Adam's momentum carries each rare "
            "active batch's step through the zero-loss steps after it"
            if adam
            else ""
        )
        return Hit(
            f"{what} {amount}, after the loss had been active; {key} fell from "
            f"{fmt(float(evaluation.max()))} (step {int(evaluation.idxmax())}) to "
            f"{fmt(float(evaluation.iloc[-1]))} (step {int(evaluation.index[-1])}){why}",
            first,
            last,
            severity=Severity.WARNING,
        )
    reached = (
        f"; {key} went from {fmt(float(evaluation.iloc[0]))} (step {int(evaluation.index[0])}) "
        f"to {fmt(float(evaluation.iloc[-1]))} (step {int(evaluation.index[-1])})"
        if len(evaluation) >= 2
        else ""
    )
    return Hit(
        f"{what} {amount}, after the loss had been active: the miner ran out of violating "
        f"pairs once the training batches were separated{reached}",
        first,
        last,
        severity=Severity.INFO,
    )


def _dead_span(dead: pd.Series) -> tuple[int, int] | None:
    """(first step, last step) of the dead stretch: the longest run of dead steps, up to
    the last logged step while most steps after it are dead too (a live run's span
    follows it), or the second half when it is mostly dead with live batches between."""
    if dead.empty:
        return None
    longest = longest_run(dead)
    if longest is not None and longest[0] >= max(MIN_DEAD_POINTS, MIN_DEAD_FRACTION * len(dead)):
        _, first, last = longest
        if float(dead.loc[first:].mean()) >= MOSTLY_DEAD:
            last = int(dead.index[-1])
        return first, last
    second_half = dead[dead.index >= dead.index[0] + (dead.index[-1] - dead.index[0]) / 2]
    if len(second_half) >= MIN_DEAD_POINTS and float(second_half.mean()) >= MOSTLY_DEAD:
        return int(second_half.index[0]), int(second_half.index[-1])
    return None
