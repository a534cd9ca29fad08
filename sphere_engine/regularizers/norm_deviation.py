"""The one mechanism behind the norm-variance family (SCIENCE.md §2).

L = (1/N) Σ_i (||f_i − c||^p − t)² with centre c ∈ {origin, batch mean}, power
p ∈ {1, 2} and target t ∈ {batch mean, EMA, 0}:
  SEC       — c = 0,    p = 1, t = mean norm (or its EMA);
  l2        — c = 0,    p = 1, t = 0 (that is, (1/N) Σ ||f_i||²);
  isotropic — c = mean, p = 2, t = mean squared radius.
"""

from __future__ import annotations

from typing import Literal

import torch


def radii(
    embeddings: torch.Tensor, centre: Literal["origin", "batch_mean"], power: Literal[1, 2]
) -> torch.Tensor:
    """||f_i − c||^power for N × d ``embeddings``; returns N values.

    With ``centre="batch_mean"`` the centre stays in the graph, so the penalty is
    translation invariant and its gradients sum to zero over the batch.
    """
    if centre == "batch_mean":
        embeddings = embeddings - embeddings.mean(dim=0, keepdim=True)
    if power == 2:
        return (embeddings**2).sum(dim=1)
    return torch.linalg.vector_norm(embeddings, dim=1)


def squared_deviation(values: torch.Tensor, target: torch.Tensor | float) -> torch.Tensor:
    """(1/N) Σ_i (values_i − target)²; ``values``: N; returns a 0-dim tensor."""
    return ((values - target) ** 2).mean()
