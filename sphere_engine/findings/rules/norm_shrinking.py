"""Norms shrinking towards the normalisation ε."""

from __future__ import annotations

from sphere_engine.catalogue.metric import Source
from sphere_engine.findings.finding import Hit, Severity
from sphere_engine.findings.registry import register_finding
from sphere_engine.findings.run_series import RunSeries
from sphere_engine.findings.trends import finite, fmt, last_part

TRAIN = Source.TRAINING_BATCH

# Two orders of magnitude below the run's own peak and under 1e-2 absolute: the 1/‖f‖
# factor of the normalised gradient is then ≥ 100× what it was.
SHRINK_FACTOR = 1e-2
SMALL_NORM = 1e-2
# A sample this close to F.normalize's ε = 1e-12 has a direction made of rounding.
NEAR_EPS = 1e-6


@register_finding(
    title="Norms shrinking towards ε",
    worst=Severity.WARNING,
    explanation=(
        "The embedding norms are collapsing towards zero, where normalisation divides by "
        "its ε and the direction of f is numerical noise. The gradient of a normalised loss "
        "is scaled by 1/‖f‖, so tiny norms make every step a huge turn. This is the failure "
        "of regularising the norms towards μ = 0 (an L2 penalty on f) instead of towards "
        "their batch mean, which the SEC paper's ablation shows (Zhang et al. 2020, Table: "
        "μ = 0 loses several points of Recall@1 against μ = batch mean)."
    ),
    paper="Zhang et al., Deep Metric Learning with Spherical Embedding, NeurIPS 2020",
    evidence=((TRAIN, "norm/mean"), (TRAIN, "norm/min")),
    action="Regularise towards the batch-mean norm (SEC) instead of 0, or lower the norm "
    "penalty's weight.",
)
def norms_shrinking(run: RunSeries) -> Hit | None:
    smallest = finite(run.series("norm/min"))
    tiny = smallest[smallest <= NEAR_EPS]
    if not tiny.empty:
        return Hit(
            f"smallest norm {fmt(float(tiny.iloc[0]))} at step {int(tiny.index[0])}",
            int(tiny.index[0]),
            int(smallest.index[-1]),
            severity=Severity.WARNING,
        )
    norms = finite(run.series("norm/mean"))
    if len(norms) < 3:
        return None
    peak_step = int(norms.idxmax())
    peak = float(norms.max())
    final = float(last_part(norms, 0.1).median())
    if final > SMALL_NORM or final > SHRINK_FACTOR * peak:
        return None
    return Hit(
        f"mean norm fell from {fmt(peak)} (step {peak_step}) to {fmt(final)} (step "
        f"{int(norms.index[-1])})",
        peak_step,
        int(norms.index[-1]),
        severity=Severity.WARNING,
    )
