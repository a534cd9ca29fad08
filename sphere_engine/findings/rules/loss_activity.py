"""Dead loss: no active pairs or triplets, so nothing is learnt."""

from __future__ import annotations

import pandas as pd

from sphere_engine.catalogue.metric import Source
from sphere_engine.findings.finding import Hit, Severity
from sphere_engine.findings.registry import register_finding
from sphere_engine.findings.run_series import RunSeries
from sphere_engine.findings.trends import longest_run

TRAIN = Source.TRAINING_BATCH

# A zero loss now and then is a batch the miner found easy; a quarter of the logged
# steps in a row (and at least a few) is a run that stopped learning.
MIN_DEAD_POINTS = 3
MIN_DEAD_FRACTION = 0.25
# Or dead most of the time over the second half, with a rare non-zero batch between.
MOSTLY_DEAD = 0.8


@register_finding(
    title="Dead loss: no active pairs or triplets",
    severity=Severity.CRITICAL,
    explanation=(
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
    reads=((TRAIN, "loss/total"),),
    action="Use a larger margin, harder mining (batch-hard) or a loss that weighs every pair "
    "(multi-similarity, N-pair); check that batches hold several samples per class.",
)
def dead_loss(run: RunSeries) -> Hit | None:
    loss = run.series("loss/metric")
    if loss.empty:
        loss = run.series("loss/total")
    active = run.series("mining/active_fraction")
    dead = loss == 0.0
    what = "metric loss exactly 0"
    if not active.empty:
        dead = (active == 0.0).reindex(loss.index.union(active.index), fill_value=False) | (
            dead.reindex(loss.index.union(active.index), fill_value=False)
        )
        what = "no active pairs or triplets"
    return _dead_span(dead, what)


def _dead_span(dead: pd.Series, what: str) -> Hit | None:
    if dead.empty:
        return None
    longest = longest_run(dead)
    if longest is not None and longest[0] >= max(MIN_DEAD_POINTS, MIN_DEAD_FRACTION * len(dead)):
        length, first, last = longest
        return Hit(f"{what} for {length} logged steps in a row (steps {first}–{last})", first, last)
    second_half = dead[dead.index >= dead.index[0] + (dead.index[-1] - dead.index[0]) / 2]
    if len(second_half) >= MIN_DEAD_POINTS and float(second_half.mean()) >= MOSTLY_DEAD:
        first, last = int(second_half.index[0]), int(second_half.index[-1])
        share = float(second_half.mean())
        return Hit(f"{what} in {share:.0%} of the logged steps {first}–{last}", first, last)
    return None
