"""Distribution on the sphere: uniformity, alignment (Wang & Isola 2020), energy (Liu et al.)."""

from __future__ import annotations

from typing import Any

import numpy as np

from sphere_engine.metrics.inputs import check_embeddings, check_pair, l2_normalize

UNIFORMITY_MAX_POINTS = 4096
_BLOCK_ROWS = 1024
_MIN_DISTANCE = 1e-6  # coincident points would give infinite energy


def _mean_over_pairs(points: np.ndarray, transform: Any) -> float:
    """Mean over pairs i ≠ j of transform(cos_ij) for M × d rows, in row blocks.

    The full (ordered) matrix is summed with its diagonal zeroed: both orders of a
    pair count, which halves nothing and avoids building index arrays of M² pairs.
    """
    count, total = points.shape[0], 0.0
    for start in range(0, count, _BLOCK_ROWS):
        values = transform(points[start : start + _BLOCK_ROWS] @ points.T)
        rows = np.arange(values.shape[0])
        values[rows, rows + start] = 0.0
        total += float(values.sum(dtype=np.float64))
    return total / (count * (count - 1))


def uniformity_scores(unit: np.ndarray, *, t: float = 2.0) -> float:
    """log mean over pairs i ≠ j of exp(−t ||x_i − x_j||²), unit-length M × d rows."""

    def gaussian(cos: np.ndarray) -> np.ndarray:
        return np.exp(-t * (2.0 - 2.0 * cos))

    return float(np.log(_mean_over_pairs(unit.astype(np.float32), gaussian)))


def uniformity(
    embeddings: Any, *, t: float = 2.0, max_points: int = UNIFORMITY_MAX_POINTS, seed: int = 0
) -> float:
    """Uniformity log E[exp(−t ||f̂_i − f̂_j||²)] over pairs i ≠ j of N × d embeddings.

    Lower is more uniform (minimum ≈ −4 for t = 2 in high dimension). The pair count
    grows as N², so above ``max_points`` it is computed on a uniform random subsample
    of ``max_points`` rows drawn with ``seed`` (the same rows for the same seed).
    """
    points = check_embeddings(embeddings)
    if points.shape[0] < 2:
        raise ValueError("uniformity needs at least 2 embeddings")
    if max_points < 2:
        raise ValueError(f"max_points must be at least 2; got {max_points}")
    unit = l2_normalize(points)
    return uniformity_scores(subsample(unit, max_points, seed), t=t)


def subsample(points: np.ndarray, max_points: int, seed: int) -> np.ndarray:
    """At most ``max_points`` rows of an N × d array: all, or a seeded uniform subsample."""
    if points.shape[0] <= max_points:
        return points
    keep = np.sort(np.random.default_rng(seed).choice(points.shape[0], max_points, replace=False))
    return points[keep]


def alignment_scores(unit: np.ndarray, labels: np.ndarray) -> float:
    """``alignment`` on checked unit-length embeddings; exact, O(N d), no pair loop."""
    _, index, counts = np.unique(labels, return_inverse=True, return_counts=True)
    sums = np.zeros((counts.size, unit.shape[1]), dtype=np.float64)
    np.add.at(sums, index, unit.astype(np.float64))
    counts = counts.astype(np.float64)
    # Σ_{i≠j in class} ||x_i − x_j||² = 2 n Σ||x_i||² − 2 ||Σ x_i||², with ||x_i|| = 1.
    squared_sums = (unit.astype(np.float64) ** 2).sum(axis=1)
    per_class_sq = np.bincount(index, weights=squared_sums, minlength=counts.size)
    distances = 2 * counts * per_class_sq - 2 * (sums**2).sum(axis=1)
    pairs = counts * (counts - 1)
    if pairs.sum() == 0:
        return float("nan")
    return float(max(distances.sum(), 0.0) / pairs.sum())


def alignment(embeddings: Any, labels: Any) -> float:
    """Alignment E ||f̂_i − f̂_j||² over same-class pairs i ≠ j of N × d embeddings.

    Every same-class pair counts once (large classes weigh more); 0 means every
    class collapsed to a point; NaN when no class has two samples.
    """
    points, true = check_pair(embeddings, labels, min_classes=1)
    return alignment_scores(l2_normalize(points), true)


def hyperspherical_energy(points: Any) -> float:
    """Mean over pairs i ≠ j of 1 / ||p̂_i − p̂_j|| for M × d points (s = 1 energy).

    Meant for class centroids or classifier weights (M small). Distances below 1e-6
    are clamped so coincident points give a large finite value. Lower is more spread.
    """
    rows = check_embeddings(points, "points")
    if rows.shape[0] < 2:
        raise ValueError(f"hyperspherical_energy needs at least 2 points; got {rows.shape[0]}")
    return hyperspherical_energy_scores(l2_normalize(rows, "points").astype(np.float64))


def hyperspherical_energy_scores(unit: np.ndarray) -> float:
    """``hyperspherical_energy`` of unit-length (or zero) M × d float64 rows."""

    def inverse_distance(cos: np.ndarray) -> np.ndarray:
        return 1.0 / np.sqrt(np.maximum(2.0 - 2.0 * cos, _MIN_DISTANCE**2))

    return _mean_over_pairs(unit.astype(np.float64), inverse_distance)
