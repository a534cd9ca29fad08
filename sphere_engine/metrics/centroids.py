"""Class centroids on the sphere (SCIENCE.md §6)."""

from __future__ import annotations

import numpy as np


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
