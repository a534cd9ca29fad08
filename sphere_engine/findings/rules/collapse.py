"""Collapse: the embeddings gather in a point or a low-dimensional subspace."""

from __future__ import annotations

from sphere_engine.catalogue.metric import Source
from sphere_engine.findings.finding import Hit, Severity
from sphere_engine.findings.registry import register_finding
from sphere_engine.findings.run_series import RunSeries
from sphere_engine.findings.trends import finite, fmt

EVAL = Source.EVALUATION

# Uniformity log E[exp(−2‖f̂_i − f̂_j‖²)] is −4 for far-apart points and 0 for one point.
# Above −0.05 the typical squared distance between unit embeddings is < 0.025 (≈ 9°):
# one point, whatever Recall@1 still ranks (the corpus's positives-only runs: −0.0004).
# Between −0.3 and −0.05 (< 0.15, ≈ 22°) the embeddings sit in a narrow cone: the
# tuplet-margin + SEC preset runs end at −0.2 with a sound Recall@1, so that is worth
# knowing, not an alarm.
UNIFORMITY_COLLAPSED = -0.05
UNIFORMITY_NARROW = -0.3
UNIFORMITY_RISE = 1.0
# Effective rank halving from its best, or below 1.5 dimensions for a wider embedding.
RANK_FALL = 0.5
RANK_FLOOR = 1.5


@register_finding(
    title="Embedding collapse",
    worst=Severity.CRITICAL,
    explanation=(
        "Critical when the test embeddings sit in one point (uniformity near 0); a warning "
        "when they span a single direction; worth knowing when they only gather in a "
        "narrow cone or lose half their effective rank. "
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
    rank = finite(run.eval("effective_rank"))
    dimension = run.config_value("model.embedding_dim", 0) or 0
    if len(uniformity):
        last, step = float(uniformity.iloc[-1]), int(uniformity.index[-1])
        if last >= UNIFORMITY_COLLAPSED:
            return Hit(
                f"uniformity {fmt(last)} at step {step} (0 = one point, −4 = spread out)",
                step,
                step,
                severity=Severity.CRITICAL,
            )
    if len(rank):
        last, step = float(rank.iloc[-1]), int(rank.index[-1])
        if last < RANK_FLOOR and (dimension == 0 or dimension > 2):
            return Hit(
                f"effective rank {fmt(last)} at step {step}: the embeddings span one direction",
                step,
                step,
                severity=Severity.WARNING,
            )
    if len(uniformity):
        last, step = float(uniformity.iloc[-1]), int(uniformity.index[-1])
        low, start = float(uniformity.min()), int(uniformity.idxmin())
        if last >= UNIFORMITY_NARROW or last - low >= UNIFORMITY_RISE:
            # one evaluation (or none lower than the last): a level, not a rise
            change = (
                f"uniformity {fmt(last)} at step {step}"
                if start == step
                else f"uniformity rose from {fmt(low)} (step {start}) to {fmt(last)} (step {step})"
            )
            return Hit(
                f"{change}: the embeddings gather in a narrow cone",
                start,
                step,
                severity=Severity.INFO,
            )
    if len(rank) >= 2:
        last, step, best = float(rank.iloc[-1]), int(rank.index[-1]), float(rank.max())
        if last <= RANK_FALL * best:
            return Hit(
                f"effective rank fell from {fmt(best)} (step {int(rank.idxmax())}) to "
                f"{fmt(last)} (step {step})",
                int(rank.idxmax()),
                step,
                severity=Severity.INFO,
            )
    return None
