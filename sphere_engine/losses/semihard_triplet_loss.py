"""``SemiHardTripletLoss``: FaceNet's semi-hard negative mining (Schroff et al. 2015)."""

from __future__ import annotations

from typing import ClassVar

import torch

from sphere_engine.losses.cosine_margin_loss import CosineMarginLoss
from sphere_engine.losses.pair_utils import cosine_matrix, pair_masks, zero_like_graph
from sphere_engine.losses.registry import LOSSES


@LOSSES.register("semihard_triplet")
class SemiHardTripletLoss(CosineMarginLoss):
    """Triplet loss with one semi-hard negative per anchor-positive pair.

    Follows TensorFlow's ``triplet_semihard_loss`` with cosine similarity in place of
    distance. For each anchor-positive pair (a, p), the negative is the most similar
    negative that is still *less* similar than the positive (s_an < s_ap: farther than
    the positive); it gives a non-zero loss only if it lies within the margin. When no
    negative is farther than the positive, the fallback is the *least* similar negative
    (the easiest, as in TF). L = mean over all anchor-positive pairs of
    [s_an − s_ap + margin]_+. Mining is done on detached similarities.
    """

    param_help: ClassVar[dict[str, str]] = {
        "margin": "Margin between positive and negative cosine similarity (unitless; "
        "FaceNet's α = 0.2 on squared distance = 0.1 here)",
    }

    def compute_loss(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        sim = cosine_matrix(embeddings)  # N × N
        positive, negative = pair_masks(labels)
        anchor, pos = positive.nonzero(as_tuple=True)  # M anchor-positive pairs
        if len(anchor) == 0 or not negative.any():
            return zero_like_graph(embeddings)
        sim_ap = sim[anchor, pos]  # M
        candidates = sim[anchor].detach()  # M × N
        is_negative = negative[anchor]
        semi_hard = is_negative & (candidates < sim_ap.detach()[:, None])
        inf = torch.finfo(sim.dtype).max
        hardest_semi = candidates.masked_fill(~semi_hard, -inf).argmax(dim=1)
        easiest = candidates.masked_fill(~is_negative, inf).argmin(dim=1)
        chosen = torch.where(semi_hard.any(dim=1), hardest_semi, easiest)
        sim_an = sim[anchor, chosen]  # M; anchors without negatives give s = its own row
        valid = is_negative.any(dim=1)
        losses = (sim_an - sim_ap + self.margin).clamp(min=0) * valid
        self.note_mining(losses > 0, valid, sim, negative)
        return losses.sum() / valid.sum().clamp(min=1)
