"""``TripletMarginLoss`` over all valid triplets of a batch."""

from __future__ import annotations

from typing import ClassVar

import torch

from sphere_engine.losses.cosine_margin_loss import CosineMarginLoss
from sphere_engine.losses.pair_utils import (
    cosine_matrix,
    mean_over_active,
    pair_masks,
    zero_like_graph,
)
from sphere_engine.losses.registry import LOSSES


@LOSSES.register("triplet")
class TripletMarginLoss(CosineMarginLoss):
    """Triplet loss [s_an − s_ap + margin]_+ on cosine similarities.

    Every valid triplet (a, p, n) with y_a = y_p, a ≠ p, y_n ≠ y_a is used; the loss is
    the mean over the triplets with non-zero loss (pytorch-metric-learning's default
    reducer), 0 when none is active. A cosine margin m equals a squared-Euclidean
    margin 2m on unit vectors (||f̂_a − f̂_p||² = 2 − 2 s_ap).
    """

    param_help: ClassVar[dict[str, str]] = {
        "margin": "Margin between positive and negative cosine similarity (unitless; "
        "0.1 cosine = 0.2 in squared Euclidean distance on the unit sphere)",
    }

    def compute_loss(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        sim = cosine_matrix(embeddings)  # N × N
        positive, negative = pair_masks(labels)
        anchor, pos = positive.nonzero(as_tuple=True)  # M anchor-positive pairs
        if len(anchor) == 0:
            return zero_like_graph(embeddings)
        # M × N: row = an anchor-positive pair, column = a candidate negative.
        losses = sim[anchor] - sim[anchor, pos][:, None] + self.margin
        losses = losses.clamp(min=0) * negative[anchor]
        self.note_mining(losses > 0, negative[anchor], sim, negative)
        return mean_over_active(losses)
