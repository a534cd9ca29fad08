"""Tiny 2-D embeddings built from angles, and their cosines, for hand-computed losses."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import pytest
import torch


def _circle(angles: Sequence[float], radii: Sequence[float] | None = None) -> torch.Tensor:
    """f_i = r_i (cos θ_i, sin θ_i) as an N × 2 float64 tensor."""
    radii = radii or [1.0] * len(angles)
    return torch.tensor(
        [[r * math.cos(a), r * math.sin(a)] for a, r in zip(angles, radii, strict=True)],
        dtype=torch.float64,
    )


def _cosines(angles: Sequence[float]) -> list[list[float]]:
    """cos(θ_i − θ_j): the cosine similarity of two points on the circle."""
    return [[math.cos(a - b) for b in angles] for a in angles]


@pytest.fixture
def circle() -> Callable[..., torch.Tensor]:
    return _circle


@pytest.fixture
def cosines() -> Callable[[Sequence[float]], list[list[float]]]:
    return _cosines
