"""``MultiSimilarityLoss`` with its pair mining (Wang et al., CVPR 2019)."""

from __future__ import annotations

from typing import Any, ClassVar

import torch

from sphere_engine.config.option_checks import check_option
from sphere_engine.losses.base_loss import BaseLoss
from sphere_engine.losses.pair_utils import cosine_matrix, pair_masks
from sphere_engine.losses.registry import LOSSES


@LOSSES.register("multi_similarity")
class MultiSimilarityLoss(BaseLoss):
    """Soft weighting of mined positive and negative pairs of each anchor.

    Mining (on detached similarities, per anchor i with positives P_i and negatives
    N_i): keep negative k if s_ik + margin > min_{j∈P_i} s_ij, keep positive j if
    s_ij − margin < max_{k∈N_i} s_ik. Then
      L_i = (1/α) log(1 + Σ_{kept j} exp(−α (s_ij − λ)))
          + (1/β) log(1 + Σ_{kept k} exp( β (s_ik − λ))),
    and L = (1/N) Σ_i L_i, where anchors left without a kept positive or a kept
    negative contribute 0 but still count in N (as in the authors' code).
    """

    param_help: ClassVar[dict[str, str]] = {
        "alpha": "α, weight scale of positive pairs (unitless)",
        "beta": "β, weight scale of negative pairs (unitless)",
        "thresh": "λ, cosine similarity at which pair weights switch (unitless, in [-1, 1])",
        "margin": "Mining margin on cosine similarity (unitless)",
    }

    def __init__(
        self,
        *,
        alpha: float = 2.0,
        beta: float = 40.0,
        thresh: float = 0.5,
        margin: float = 0.1,
        **base: Any,
    ) -> None:
        super().__init__(**base)
        check_option("alpha", alpha, low=0, low_open=True)
        check_option("beta", beta, low=0, low_open=True)
        check_option("thresh", thresh, low=-1.0, high=1.0)
        check_option("margin", margin, low=0.0, high=2.0)
        self.alpha, self.beta, self.thresh, self.margin = alpha, beta, thresh, margin

    def compute_loss(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        sim = cosine_matrix(embeddings)  # N × N
        positive, negative = pair_masks(labels)
        detached = sim.detach()
        min_pos = detached.masked_fill(~positive, float("inf")).amin(dim=1, keepdim=True)
        max_neg = detached.masked_fill(~negative, float("-inf")).amax(dim=1, keepdim=True)
        kept_neg = negative & (detached + self.margin > min_pos)
        kept_pos = positive & (detached - self.margin < max_neg)
        pos_term = soft_plus_sum(-self.alpha * (sim - self.thresh), kept_pos) / self.alpha
        neg_term = soft_plus_sum(self.beta * (sim - self.thresh), kept_neg) / self.beta
        valid = kept_pos.any(dim=1) & kept_neg.any(dim=1)
        self.note_mining(kept_pos | kept_neg, positive | negative, sim, negative)
        return ((pos_term + neg_term) * valid).sum() / len(labels)


def soft_plus_sum(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Row-wise log(1 + Σ_{masked j} exp(values_ij)), computed stably.

    ``values``, ``mask``: N × N. Returns N values (0 for rows with no masked entry).
    """
    masked = values.masked_fill(~mask, float("-inf"))
    zeros = torch.zeros_like(values[:, :1])
    return torch.logsumexp(torch.cat([zeros, masked], dim=1), dim=1)
