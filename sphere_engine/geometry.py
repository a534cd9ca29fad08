"""Geometry of embeddings on the sphere, numpy only (SCIENCE.md §6).

Shared by ``sphere_engine.metrics`` (evaluation) and the dashboard (the Geometry
page), so the class-centroid and angle definitions exist once. Torch-free on purpose:
the app imports this without loading torch or faiss.
"""

from __future__ import annotations

import numpy as np

_EPS = 1e-12


def unit_rows(points: np.ndarray) -> np.ndarray:
    """N × d rows divided by their L2 norm, in float64 (a zero row stays zero)."""
    x = np.asarray(points, dtype=np.float64)
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), _EPS)


def class_centroids(unit: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(classes C sorted, centroids C × d float64) of unit-length N × d embeddings.

    A class centroid is the normalised mean of its normalised embeddings. A class
    whose mean is exactly zero (e.g. two antipodal samples) has no direction; its
    centroid is left as the zero vector, which reads as 90° from everything.
    """
    classes, index = np.unique(labels, return_inverse=True)
    sums = np.zeros((classes.size, unit.shape[1]), dtype=np.float64)
    np.add.at(sums, index, unit.astype(np.float64))
    lengths = np.linalg.norm(sums, axis=1, keepdims=True)
    return classes, np.divide(sums, lengths, out=np.zeros_like(sums), where=lengths > 0)


def angles_degrees(cosines: np.ndarray) -> np.ndarray:
    """Angles in degrees of cosines (clipped to [-1, 1] against rounding)."""
    return np.degrees(np.arccos(np.clip(cosines, -1.0, 1.0)))


def row_angles_degrees(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Angles in degrees between matching rows of two unit-length M × d arrays.

    Uses 2·atan2(||a − b||, ||a + b||), which stays accurate for small angles where
    arccos of a cosine near 1 loses half the digits.
    """
    first, second = first.astype(np.float64), second.astype(np.float64)
    apart = np.linalg.norm(first - second, axis=1)
    together = np.linalg.norm(first + second, axis=1)
    return np.degrees(2.0 * np.arctan2(apart, together))


def centroid_angle_matrix(points: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """K × K angles (degrees) between the class centroids of raw N × d embeddings, and
    the K sorted class labels. The diagonal is 0 (up to rounding) for every class with
    a direction. For K in the tens of thousands use ``metrics.angular_separation``,
    which never holds the K × K matrix."""
    classes, centroids = class_centroids(unit_rows(points), np.asarray(labels))
    angles = angles_degrees(centroids @ centroids.T)
    has_direction = np.linalg.norm(centroids, axis=1) > 0
    np.fill_diagonal(angles, np.where(has_direction, 0.0, 90.0))  # arccos(1 − ε) is not 0
    return angles, classes


def pca_2d(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Project N × d points on their first two principal axes (numpy SVD).

    Returns (N × 2 coordinates, explained-variance ratio of the two axes). With
    d = 1 the second coordinate is zero.
    """
    x = np.asarray(points, dtype=float)
    if x.ndim != 2 or x.shape[0] == 0:
        raise ValueError(f"PCA needs an N × d array with N ≥ 1, got shape {x.shape}")
    centred = x - x.mean(axis=0, keepdims=True)
    _, singular, vt = np.linalg.svd(centred, full_matrices=False)
    k = min(2, vt.shape[0])
    coords = np.zeros((x.shape[0], 2))
    coords[:, :k] = centred @ vt[:k].T
    variance = singular**2
    total = variance.sum()
    ratio = np.zeros(2)
    if total > 0:
        ratio[:k] = variance[:k] / total
    return coords, ratio


def norm_cv(std: np.ndarray | float, mean: np.ndarray | float) -> np.ndarray:
    """``norm/cv`` = std / mean of the norms, elementwise; NaN where the mean is 0 (all
    norms 0: the spread relative to the size is undefined, not 0 and not huge). The
    per-step diagnostics and the evaluation metrics both compute it here."""
    std, mean = np.asarray(std, dtype=np.float64), np.asarray(mean, dtype=np.float64)
    positive = mean > 0
    return np.where(positive, std / np.where(positive, mean, 1.0), np.nan)
