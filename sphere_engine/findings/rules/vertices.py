"""Fixed-head class centroids that stay off their polytope vertices."""

from __future__ import annotations

from sphere_engine.catalogue.metric import Source
from sphere_engine.findings.finding import Hit, Severity
from sphere_engine.findings.registry import register_finding
from sphere_engine.findings.run_series import RunSeries
from sphere_engine.findings.trends import finite, fmt

EVAL = Source.EVALUATION

# A centroid 20° from its vertex is nearer a neighbouring vertex's half-angle for a
# 100-class simplex; still three-quarters of the way from where it started = not moving.
OFF_VERTEX_DEG = 20.0
STILL_FRACTION = 0.75


@register_finding(
    title="Class centroids off their fixed vertices",
    worst=Severity.WARNING,
    explanation=(
        "With a fixed classifier (regular polytope: simplex, d-cube, d-orthoplex) each "
        "class has a vertex, and training should pull the class centroid onto it (Pernici "
        "et al. 2021, 'Regular Polytope Networks'). Here the mean angle between centroids "
        "and their vertices stays large: the features do not reach the fixed geometry, so "
        "the head's margins do not hold on the test set."
    ),
    paper="Pernici et al., Regular Polytope Networks, IEEE TNNLS 2021",
    evidence=((EVAL, "vertex/angle_mean"),),
    reads=((EVAL, "vertex/angle_max"),),
    action="Train longer or with a larger learning rate on the backbone; check that the "
    "polytope has enough vertices for the classes and that the embedding is not too small.",
)
def centroids_off_vertices(run: RunSeries) -> Hit | None:
    angle = finite(run.eval("vertex/angle_mean"))
    if angle.empty:
        return None
    last = float(angle.iloc[-1])
    first = float(angle.iloc[0])
    if last < OFF_VERTEX_DEG or (len(angle) >= 2 and last < STILL_FRACTION * first):
        return None
    return Hit(
        f"mean centroid–vertex angle {fmt(last)}° at step {int(angle.index[-1])}",
        int(angle.index[0]),
        int(angle.index[-1]),
        severity=Severity.WARNING,
    )
