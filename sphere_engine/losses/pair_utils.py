"""Shared pieces of the pair losses: cosine matrix, label masks, reductions."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def cosine_matrix(embeddings: torch.Tensor) -> torch.Tensor:
    """Cosine similarities s_ij = f̂_i·f̂_j.

    ``embeddings``: N × d raw embeddings. Returns an N × N matrix.
    """
    normalised = F.normalize(embeddings, dim=1)
    return normalised @ normalised.T


def pair_masks(labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Boolean N × N masks of positive pairs (same label, i ≠ j) and negative pairs."""
    same = labels[:, None] == labels[None, :]
    eye = torch.eye(len(labels), dtype=torch.bool, device=labels.device)
    return same & ~eye, ~same


def mean_over_active(losses: torch.Tensor) -> torch.Tensor:
    """Mean of the strictly positive entries of ``losses`` (any shape); 0 if none.

    The zero stays attached to the graph so ``backward`` works on easy batches.
    """
    active = (losses > 0).sum()
    return losses.sum() / active.clamp(min=1)


def zero_like_graph(embeddings: torch.Tensor) -> torch.Tensor:
    """A scalar 0 attached to ``embeddings``' graph (for batches without valid pairs)."""
    return embeddings.sum() * 0.0
