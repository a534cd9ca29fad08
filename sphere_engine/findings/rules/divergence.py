"""Diverged: a non-finite loss or embedding, or norms growing without bound."""

from __future__ import annotations

from sphere_engine.catalogue.metric import Source
from sphere_engine.findings.finding import Hit, Severity
from sphere_engine.findings.registry import register_finding
from sphere_engine.findings.run_series import RunSeries
from sphere_engine.findings.trends import finite, first_nonfinite, fmt

TRAIN = Source.TRAINING_BATCH

# A healthy run's norms grow by one or two orders of magnitude at most (a normalised
# loss pushes them outwards ∝ 1/‖f‖, SEC paper §3); six orders, or norms past 1e8 where
# float32 similarities lose their digits, is an optimiser out of control.
GROWTH_LIMIT = 1e6
ABSOLUTE_LIMIT = 1e8


@register_finding(
    title="Training diverged",
    severity=Severity.CRITICAL,
    explanation=(
        "The loss or the embeddings became non-finite, or the embedding norms grew by many "
        "orders of magnitude. A loss on normalised embeddings is scale-invariant, so a run "
        "can keep a finite, constant loss while the norms explode: the gradient on f is "
        "orthogonal to f and every step adds to ‖f‖ (Zhang et al. 2020, 'Deep Metric "
        "Learning with Spherical Embedding', §3), and with a huge learning rate each step "
        "is a jump the direction never recovers from. Nothing this run logs after that point "
        "measures learning."
    ),
    paper="Zhang et al., Deep Metric Learning with Spherical Embedding, NeurIPS 2020",
    evidence=((TRAIN, "loss/total"), (TRAIN, "norm/mean")),
    reads=((TRAIN, "norm/max"),),
    action="Lower the learning rate (by 10× or more), add warm-up or gradient clipping, "
    "or add SEC to hold the norms.",
)
def diverged(run: RunSeries) -> Hit | None:
    for key in ("loss/total", "norm/mean", "norm/max"):
        step = first_nonfinite(run.series(key))
        if step is not None:
            return Hit(f"{key} became non-finite at step {step}", step, step)
    norms = finite(run.series("norm/mean"))
    if len(norms) < 2:
        return None
    start = max(float(norms.iloc[0]), 1e-12)
    growth = norms / start
    over = norms[(growth >= GROWTH_LIMIT) | (norms >= ABSOLUTE_LIMIT)]
    if over.empty:
        return None
    peak = float(norms.max())
    return Hit(
        f"mean norm grew from {fmt(start)} to {fmt(peak)} (×{fmt(peak / start)}) "
        f"from step {int(over.index[0])}",
        int(over.index[0]),
        int(norms.index[-1]),
    )
