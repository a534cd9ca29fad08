"""The softmax-over-similarities term shared by SupCon and NT-Xent."""

from __future__ import annotations

import torch

from sphere_engine.losses.pair_utils import cosine_matrix, pair_masks


def supervised_contrastive(
    embeddings: torch.Tensor, labels: torch.Tensor, temperature: float
) -> torch.Tensor:
    """Mean over anchors with a positive of −(1/|P(i)|) Σ_{p∈P(i)} log softmax_p.

    The softmax of anchor i runs over all a ≠ i of s_ia / temperature. ``embeddings``:
    N × d raw; ``labels``: N. Returns a 0-dim tensor (0 when no anchor has a positive).
    """
    sim = cosine_matrix(embeddings) / temperature  # N × N
    positive, _ = pair_masks(labels)
    eye = torch.eye(len(labels), dtype=torch.bool, device=labels.device)
    log_prob = sim - torch.logsumexp(sim.masked_fill(eye, float("-inf")), dim=1, keepdim=True)
    num_pos = positive.sum(dim=1)
    per_anchor = -(log_prob * positive).sum(dim=1) / num_pos.clamp(min=1)
    has_pos = num_pos > 0
    return (per_anchor * has_pos).sum() / has_pos.sum().clamp(min=1)
