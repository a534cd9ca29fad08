"""``ContrastiveLoss`` (Hadsell et al. 2006) on cosine similarity."""

from __future__ import annotations

from typing import Any, ClassVar

import torch

from sphere_engine.config.option_checks import check_option
from sphere_engine.losses.base_loss import BaseLoss
from sphere_engine.losses.pair_utils import cosine_matrix, mean_over_active, pair_masks
from sphere_engine.losses.registry import LOSSES


@LOSSES.register("contrastive")
class ContrastiveLoss(BaseLoss):
    """Pull positives above ``pos_margin``, push negatives below ``neg_margin``.

    Margins are on the cosine similarity s_ij of L2-normalised embeddings (not on a
    distance):  L = mean_active [pos_margin − s_ij]_+ over positive pairs
                  + mean_active [s_ij − neg_margin]_+ over negative pairs,
    each mean taken over the pairs with non-zero loss (pytorch-metric-learning's
    ``AvgNonZeroReducer``); a part with no active pair contributes 0.
    """

    param_help: ClassVar[dict[str, str]] = {
        "pos_margin": "Cosine similarity positives are pulled up to (unitless, in [-1, 1]; "
        "1 = pull until identical)",
        "neg_margin": "Cosine similarity negatives are pushed below (unitless, in [-1, 1])",
    }

    def __init__(self, *, pos_margin: float = 1.0, neg_margin: float = 0.5, **base: Any) -> None:
        super().__init__(**base)
        check_option("pos_margin", pos_margin, low=-1.0, high=1.0)
        check_option("neg_margin", neg_margin, low=-1.0, high=1.0)
        self.pos_margin = pos_margin
        self.neg_margin = neg_margin

    def compute_loss(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        sim = cosine_matrix(embeddings)  # N × N
        positive, negative = pair_masks(labels)
        pos_loss = (self.pos_margin - sim).clamp(min=0) * positive
        neg_loss = (sim - self.neg_margin).clamp(min=0) * negative
        self.note_mining((pos_loss > 0) | (neg_loss > 0), positive | negative, sim, negative)
        return mean_over_active(pos_loss) + mean_over_active(neg_loss)
