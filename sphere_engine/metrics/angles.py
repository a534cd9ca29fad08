"""Angular separation of classes, and alignment to fixed polytope vertices (degrees)."""

from __future__ import annotations

from typing import Any

import numpy as np

from sphere_engine.geometry import angles_degrees, class_centroids, row_angles_degrees
from sphere_engine.metrics.inputs import (
    check_embeddings,
    check_labels,
    check_pair,
    check_same_dimension,
    l2_normalize,
)

_BLOCK_ROWS = 1024  # rows of the centroid Gram matrix held at once


def _inter_centroid_angles(centroids: np.ndarray) -> tuple[float, float]:
    """(min, mean) angle in degrees over the C(C-1)/2 pairs of C × d centroids."""
    count = centroids.shape[0]
    smallest, total = np.inf, 0.0
    for start in range(0, count - 1, _BLOCK_ROWS):
        block = centroids[start : start + _BLOCK_ROWS] @ centroids.T
        # Block row r is centroid start + r; keep its pairs with later centroids only.
        rows, cols = np.triu_indices(block.shape[0], k=1 + start, m=count)
        upper = angles_degrees(block[rows, cols])
        smallest, total = min(smallest, float(upper.min())), total + float(upper.sum())
    return smallest, total / (count * (count - 1) / 2)


def angular_separation_scores(unit: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    """``angular_separation`` on checked unit-length N × d embeddings."""
    classes, centroids = class_centroids(unit, labels)
    inter_min, inter_mean = _inter_centroid_angles(centroids)
    index = np.searchsorted(classes, labels)
    intra_mean = float(row_angles_degrees(unit, centroids[index]).mean())
    return {
        "angle/inter_min": inter_min,
        "angle/inter_mean": inter_mean,
        "angle/simplex_bound": float(np.degrees(np.arccos(-1.0 / (classes.size - 1)))),
        "angle/intra_mean": intra_mean,
        "angle/intra_over_inter": intra_mean / inter_mean if inter_mean > 0 else float("nan"),
    }


def angular_separation(embeddings: Any, labels: Any) -> dict[str, float]:
    """Angles (degrees) between class centroids and within classes, N × d embeddings.

    ``angle/inter_min`` / ``angle/inter_mean``: min / mean over class pairs of the
    angle between centroids (normalised mean of normalised embeddings);
    ``angle/simplex_bound``: the best possible minimum, arccos(−1/(K−1)) for K classes;
    ``angle/intra_mean``: mean over samples of the angle to their class centroid;
    ``angle/intra_over_inter``: intra_mean / inter_mean (lower is better separated).
    """
    points, true = check_pair(embeddings, labels)
    return angular_separation_scores(l2_normalize(points), true)


def vertex_alignment(embeddings: Any, labels: Any, vertices: Any) -> dict[str, float]:
    """Angle (degrees) between each class centroid and its fixed-head vertex.

    embeddings: N × d; labels: N class ids in 0..K−1, class c assigned to row c of
    vertices (K × d, e.g. a fixed polytope head's ``vertices`` buffer). Classes absent
    from ``labels`` are skipped. Returns ``vertex/angle_mean`` and ``vertex/angle_max``.
    """
    points = check_embeddings(embeddings)
    true = check_labels(labels, points.shape[0])
    corners = check_embeddings(vertices, "vertices")
    check_same_dimension(corners, "vertices", points, "the embeddings")
    if true.min() < 0 or true.max() >= corners.shape[0]:
        raise ValueError(
            f"labels must lie in 0..{corners.shape[0] - 1} (one vertex per class); "
            f"got range {int(true.min())}..{int(true.max())}"
        )
    classes, centroids = class_centroids(l2_normalize(points), true)
    angles = row_angles_degrees(centroids, l2_normalize(corners, "vertices")[classes])
    return {"vertex/angle_mean": float(angles.mean()), "vertex/angle_max": float(angles.max())}
