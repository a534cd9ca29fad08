"""``BatchHardTripletLoss`` (Hermans et al. 2017, "In Defense of the Triplet Loss")."""

from __future__ import annotations

from typing import ClassVar

import torch

from sphere_engine.losses.cosine_margin_loss import CosineMarginLoss
from sphere_engine.losses.pair_utils import cosine_matrix, pair_masks, zero_like_graph
from sphere_engine.losses.registry import LOSSES


@LOSSES.register("batch_hard_triplet")
class BatchHardTripletLoss(CosineMarginLoss):
    """One triplet per anchor: its hardest positive and its hardest negative.

    Hardest positive = least similar same-class sample, hardest negative = most similar
    other-class sample (cosine similarity). L = mean over anchors that have both of
    [max_n s_an − min_p s_ap + margin]_+ (hard margin, not the soft-plus variant).
    """

    param_help: ClassVar[dict[str, str]] = {
        "margin": "Margin between hardest positive and hardest negative cosine "
        "similarity (unitless)",
    }

    def compute_loss(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        sim = cosine_matrix(embeddings)  # N × N
        positive, negative = pair_masks(labels)
        valid = positive.any(dim=1) & negative.any(dim=1)  # N anchors
        if not valid.any():
            return zero_like_graph(embeddings)
        hardest_pos = sim.masked_fill(~positive, float("inf")).amin(dim=1)
        hardest_neg = sim.masked_fill(~negative, float("-inf")).amax(dim=1)
        losses = (hardest_neg[valid] - hardest_pos[valid] + self.margin).clamp(min=0)
        self.note_mining(losses > 0, torch.ones_like(losses, dtype=torch.bool), sim, negative)
        return losses.mean()
