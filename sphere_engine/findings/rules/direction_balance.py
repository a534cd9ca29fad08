"""Unbalanced direction updates: small-norm embeddings turn faster than large ones."""

from __future__ import annotations

from sphere_engine.catalogue.metric import Source
from sphere_engine.findings.finding import Hit, Severity
from sphere_engine.findings.registry import register_finding
from sphere_engine.findings.run_series import RunSeries
from sphere_engine.findings.trends import finite, fmt, last_part

TRAIN = Source.TRAINING_BATCH

# corr(‖∂L/∂f‖, 1/‖f‖) is ≈ 1 for a normalised loss whose norms differ, ≈ 0 once the
# norms are equal (SCIENCE.md §6); 0.3 is "clearly present" on a 40-sample batch.
CORRELATION_LIMIT = 0.3
# Norm spread that makes the 1/‖f‖ factor matter: a 20 % std/mean is a 1.5× faster turn
# for the small-norm half of the batch.
CV_LIMIT = 0.2
# Norm variance doubling over the second half of the run counts as rising.
RISE_FACTOR = 2.0
# A warning from a norm CV of 0.35 (or a variance rising tenfold); below, worth knowing:
# the SimCLR presets on digits train well with a CV of 0.25–0.3 and corr ≈ 0.8.
WARN_CV = 0.35
WARN_RISE = 10.0


@register_finding(
    title="Unbalanced direction updates: try SEC",
    worst=Severity.WARNING,
    explanation=(
        "The gradient of a loss on normalised embeddings is scaled by 1/‖f‖, so when the "
        "norms spread out, small-norm embeddings turn much faster than large-norm ones and "
        "the update is unbalanced; training becomes sensitive to the learning rate and "
        "converges worse. This run shows both symptoms: a high or rising norm variance and "
        "a gradient magnitude correlated with 1/‖f‖. The spherical embedding constraint "
        "(SEC) pulls every norm towards the batch mean and removes the imbalance (Zhang et "
        "al. 2020, §3-4: norm variance 1.68 → 0.004 with multi-similarity on Cars-196)."
    ),
    paper="Zhang et al., Deep Metric Learning with Spherical Embedding, NeurIPS 2020",
    evidence=((TRAIN, "norm/cv"), (TRAIN, "grad/norm_inv_corr")),
    reads=((TRAIN, "norm/var"), (TRAIN, "direction/update_ratio")),
    action='Add the SEC regulariser (regularizer.name = "sec", weight 0.1–1), or raise its '
    "weight if it is already on.",
)
def unbalanced_directions(run: RunSeries) -> Hit | None:
    correlation = finite(last_part(run.series("grad/norm_inv_corr"), 0.5))
    if len(correlation) < 3 or float(correlation.median()) < CORRELATION_LIMIT:
        return None
    cv = finite(last_part(run.series("norm/cv"), 0.5))
    variance = finite(last_part(run.series("norm/var"), 0.5))
    cv_level = float(cv.median()) if len(cv) >= 3 else 0.0
    growth = 0.0
    if len(variance) >= 4:
        early = float(variance.iloc[: max(len(variance) // 4, 1)].median())
        growth = float(variance.iloc[-len(variance) // 4 :].median()) / max(early, 1e-12)
    high, rising = cv_level >= CV_LIMIT, growth >= RISE_FACTOR
    if not (high or rising):
        return None
    strong = cv_level >= WARN_CV or growth >= WARN_RISE
    spread = f"norm CV {fmt(float(cv.median()))}" if high else "norm variance rising"
    ratio = finite(last_part(run.series("direction/update_ratio"), 0.5))
    turn = f"; small-norm half turns {fmt(float(ratio.median()))}× as fast" if len(ratio) else ""
    return Hit(
        f"{spread} with corr(‖∂L/∂f‖, 1/‖f‖) = {fmt(float(correlation.median()))} over the "
        f"second half{turn}",
        int(correlation.index[0]),
        int(correlation.index[-1]),
        severity=Severity.WARNING if strong else Severity.INFO,
    )
