"""Generated embedding sets shared by the metrics tests (no files, no downloads)."""

from __future__ import annotations

import numpy as np
import pytest


def clustered(
    classes: int, per_class: int, dim: int, spread: float, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian blobs around random directions: (N × dim float32, N int64 labels)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(classes, dim))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    labels = np.repeat(np.arange(classes), per_class)
    points = centres[labels] + spread * rng.normal(size=(labels.size, dim))
    return points.astype(np.float32), labels.astype(np.int64)


def sparse_signs(count: int, dim: int, seed: int = 0) -> np.ndarray:
    """Vectors with exactly four ±1 entries: unit after normalising to exact ±0.5 values,
    so every cosine is a multiple of 1/4 computed exactly (many exact ties)."""
    rng = np.random.default_rng(seed)
    points = np.zeros((count, dim), dtype=np.float32)
    for row in points:
        row[rng.choice(dim, 4, replace=False)] = rng.choice([-1.0, 1.0], 4)
    return points


@pytest.fixture
def blobs() -> tuple[np.ndarray, np.ndarray]:
    """300 points, 6 overlapping classes of 50, in 16 dimensions."""
    return clustered(6, 50, 16, spread=0.35, seed=1)


@pytest.fixture
def make_clustered():
    """The ``clustered`` generator, for tests that need their own sizes."""
    return clustered


@pytest.fixture
def make_sparse_signs():
    """The ``sparse_signs`` generator (exactly tied cosines)."""
    return sparse_signs
