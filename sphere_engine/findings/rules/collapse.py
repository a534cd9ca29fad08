"""Collapse: the embeddings gather in a point or a low-dimensional subspace."""

from __future__ import annotations

from sphere_engine.catalogue.metric import Source
from sphere_engine.findings.finding import Hit, Severity
from sphere_engine.findings.registry import register_finding
from sphere_engine.findings.run_series import RunSeries
from sphere_engine.findings.trends import finite, fmt

EVAL = Source.EVALUATION

# Uniformity log E[exp(−2‖f̂_i − f̂_j‖²)] is −4 for far-apart points and 0 for one point;
# above −0.3 the typical squared distance between unit embeddings is < 0.15 (≈ 22°).
UNIFORMITY_COLLAPSED = -0.3
UNIFORMITY_RISE = 1.0
# Effective rank halving from its best, or below 1.5 dimensions for a wider embedding.
RANK_FALL = 0.5
RANK_FLOOR = 1.5


@register_finding(
    title="Embedding collapse",
    worst=Severity.CRITICAL,
    explanation=(
        "The test embeddings are collapsing: uniformity on the sphere is rising towards 0 "
        "(all points in one place; Wang & Isola 2020, 'Understanding Contrastive "
        "Representation Learning through Alignment and Uniformity on the Hypersphere') or "
        "the effective rank of their covariance is falling (dimensional collapse: the "
        "embeddings span fewer and fewer directions; Jing et al. 2022, 'Understanding "
        "Dimensional Collapse in Contrastive Self-supervised Learning'). Collapsed "
        "embeddings cannot separate classes however the loss reads."
    ),
    paper="Wang & Isola, ICML 2020; Jing et al., ICLR 2022",
    evidence=((EVAL, "uniformity"), (EVAL, "effective_rank")),
    action="Check the negatives (more per batch, a larger temperature or margin), lower the "
    "learning rate, or add a uniformity / SEC term.",
)
def collapse(run: RunSeries) -> Hit | None:
    uniformity = finite(run.eval("uniformity"))
    if len(uniformity):
        last = float(uniformity.iloc[-1])
        step = int(uniformity.index[-1])
        low = float(uniformity.min())
        if last >= UNIFORMITY_COLLAPSED:
            return Hit(
                f"uniformity {fmt(last)} at step {step} (0 = one point, −4 = spread out)",
                step,
                step,
                severity=Severity.CRITICAL,
            )
        if last - low >= UNIFORMITY_RISE:
            start = int(uniformity.idxmin())
            return Hit(
                f"uniformity rose from {fmt(low)} (step {start}) to {fmt(last)} (step {step})",
                start,
                step,
                severity=Severity.WARNING,
            )
    rank = finite(run.eval("effective_rank"))
    dimension = run.config_value("model.embedding_dim", 0) or 0
    if len(rank):
        last = float(rank.iloc[-1])
        step = int(rank.index[-1])
        best = float(rank.max())
        if len(rank) >= 2 and last <= RANK_FALL * best:
            return Hit(
                f"effective rank fell from {fmt(best)} (step {int(rank.idxmax())}) to "
                f"{fmt(last)} (step {step})",
                int(rank.idxmax()),
                step,
                severity=Severity.WARNING,
            )
        if last < RANK_FLOOR and (dimension == 0 or dimension > 2):
            return Hit(
                f"effective rank {fmt(last)} at step {step}", step, step, severity=Severity.WARNING
            )
    return None
