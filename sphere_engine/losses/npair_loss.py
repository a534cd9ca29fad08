"""``NPairLoss``: normalised N-pair loss (Sohn 2016, with cosine logits)."""

from __future__ import annotations

from typing import Any, ClassVar

import torch
import torch.nn.functional as F

from sphere_engine.config.option_checks import check_option
from sphere_engine.losses.base_loss import BaseLoss
from sphere_engine.losses.pair_utils import cosine_matrix, zero_like_graph
from sphere_engine.losses.registry import LOSSES


@LOSSES.register("npair")
class NPairLoss(BaseLoss):
    """Softmax over ``scale · cos`` between anchors and the positives of all pairs.

    Pairs are formed inside each class from consecutive samples in batch order: a
    class's samples x0, x1, x2, x3 give pairs (x0, x1) and (x2, x3); an odd last
    sample is left out. For pair i with anchor a_i and positive p_i, the logits are
    scale · cos(a_i, p_j) over all pairs j; the positives of *other* pairs of the same
    class are masked out (they are not negatives), so the negatives are the positives
    of the other classes' pairs. L = mean over pairs of −log softmax_i. On a P×K batch
    this gives P·⌊K/2⌋ pairs. Sohn's L2 penalty on the raw embeddings is not part of
    this loss: add it as the ``l2`` regulariser.
    """

    param_help: ClassVar[dict[str, str]] = {
        "scale": "Scale s multiplying the cosine logits (inverse temperature; 25 or 64)",
    }

    def __init__(self, *, scale: float = 25.0, **base: Any) -> None:
        super().__init__(**base)
        check_option("scale", scale, low=0, low_open=True)
        self.scale = scale

    def compute_loss(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        anchors, positives = consecutive_pairs(labels)
        if len(anchors) == 0:
            return zero_like_graph(embeddings)
        sim = cosine_matrix(embeddings)  # N × N
        logits = self.scale * sim[anchors][:, positives]  # pairs × pairs
        pair_labels = labels[anchors]
        same_class = pair_labels[:, None] == pair_labels[None, :]
        eye = torch.eye(len(anchors), dtype=torch.bool, device=labels.device)
        logits = logits.masked_fill(same_class & ~eye, float("-inf"))
        target = torch.arange(len(anchors), device=labels.device)
        return F.cross_entropy(logits, target)


def consecutive_pairs(labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Indices (anchors, positives) of consecutive same-class samples in batch order.

    ``labels``: N integers. Returns two index tensors of equal length (the pairs).
    """
    order = torch.argsort(labels, stable=True)  # groups classes, keeps batch order
    sorted_labels = labels[order]
    positions = torch.arange(len(labels), device=labels.device)
    start = torch.ones_like(sorted_labels, dtype=torch.bool)
    start[1:] = sorted_labels[1:] != sorted_labels[:-1]
    # Position of each sample inside its class: 0, 1, 2, ... in batch order.
    rank = positions - torch.cummax(torch.where(start, positions, 0), dim=0).values
    is_anchor = rank % 2 == 0
    has_partner = torch.zeros_like(is_anchor)
    has_partner[:-1] = sorted_labels[1:] == sorted_labels[:-1]
    first = (is_anchor & has_partner).nonzero(as_tuple=True)[0]
    return order[first], order[first + 1]
