"""Diverged: a non-finite loss or embedding, or norms growing without bound."""

from __future__ import annotations

from sphere_engine.catalogue.metric import Source
from sphere_engine.findings.finding import Hit, Severity
from sphere_engine.findings.registry import register_finding
from sphere_engine.findings.run_series import RunSeries
from sphere_engine.findings.trends import at_step, finite, first_nonfinite, fmt

TRAIN = Source.TRAINING_BATCH

# A healthy run's norms grow by one or two orders of magnitude at most (a normalised
# loss pushes them outwards ∝ 1/‖f‖, SEC paper §3); six orders, or norms past 1e8 where
# float32 similarities lose their digits, is an optimiser out of control.
GROWTH_LIMIT = 1e6
ABSOLUTE_LIMIT = 1e8


@register_finding(
    title="Training diverged",
    worst=Severity.CRITICAL,
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
    overrides=True,
    action="Lower the learning rate (by 10× or more), add warm-up or gradient clipping, "
    "or add SEC to hold the norms.",
)
def diverged(run: RunSeries) -> Hit | None:
    for key in ("loss/total", "norm/mean", "norm/max"):
        series = run.series(key)
        step = first_nonfinite(series)
        if step is not None:
            return Hit(
                f"{key} became non-finite at {at_step(series, step)}",
                step,
                step,
                severity=Severity.CRITICAL,
            )
    norms = finite(run.series("norm/mean"))
    if len(norms) < 2:
        return None
    first_step, start = int(norms.index[0]), max(float(norms.iloc[0]), 1e-12)
    over = norms[(norms / start >= GROWTH_LIMIT) | (norms >= ABSOLUTE_LIMIT)]
    if over.empty:
        return None
    crossed, peak_step = int(over.index[0]), int(norms.idxmax())
    peak = float(norms.max())
    if crossed == first_step:
        reached = f"mean norm {fmt(float(norms.iloc[0]))} by {at_step(norms, crossed)}"
    else:
        reached = (
            f"mean norm grew from {fmt(start)} at {at_step(norms, first_step)}, to "
            f"{fmt(float(over.iloc[0]))} by step {crossed}"
        )
    return Hit(
        f"{reached}; {fmt(peak)} at step {peak_step} (a healthy run stays below "
        f"{fmt(ABSOLUTE_LIMIT)})",
        crossed,
        int(norms.index[-1]),
        severity=Severity.CRITICAL,
    )
