"""``NTXentLoss``: SimCLR's normalised temperature-scaled cross-entropy (Chen et al. 2020)."""

from __future__ import annotations

from typing import Any, ClassVar

import torch

from sphere_engine.config.option_checks import check_option
from sphere_engine.losses.base_loss import BaseLoss
from sphere_engine.losses.contrastive_softmax import supervised_contrastive
from sphere_engine.losses.registry import LOSSES
from sphere_engine.registry import ComponentTraits


@LOSSES.register("ntxent")
class NTXentLoss(BaseLoss):
    """L = mean over all 2N views i of −log(exp(s_ij/τ) / Σ_{k≠i} exp(s_ik/τ)).

    j is the other view of i. Labels are instance ids, each exactly twice: the loop
    passes ``torch.cat([view1, view2])`` with ``labels = arange(N).repeat(2)``.
    """

    # Its positives are the two views of each sample, so it needs no P×K batches.
    traits: ClassVar[ComponentTraits] = ComponentTraits(requires_views=True)
    param_help: ClassVar[dict[str, str]] = {
        "temperature": "τ, divides the cosine similarities (unitless, > 0)",
    }

    def __init__(self, *, temperature: float = 0.5, **base: Any) -> None:
        super().__init__(**base)
        check_option("temperature", temperature, low=0, low_open=True)
        self.temperature = temperature

    def compute_loss(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        _, counts = torch.unique(labels, return_counts=True)
        if (counts != 2).any():
            raise ValueError(
                "labels: ntxent needs instance ids that each appear exactly twice (two "
                f"views, e.g. arange(N).repeat(2)); got counts {sorted(set(counts.tolist()))}"
            )
        return supervised_contrastive(embeddings, labels, self.temperature)
