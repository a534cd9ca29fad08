"""``SupConLoss``: supervised contrastive loss (Khosla et al., NeurIPS 2020)."""

from __future__ import annotations

from typing import Any, ClassVar

import torch

from sphere_engine.config.option_checks import check_option
from sphere_engine.losses.base_loss import BaseLoss
from sphere_engine.losses.contrastive_softmax import supervised_contrastive
from sphere_engine.losses.registry import LOSSES


@LOSSES.register("supcon")
class SupConLoss(BaseLoss):
    """L = mean_i −(1/|P(i)|) Σ_{p∈P(i)} log(exp(s_ip/τ) / Σ_{a≠i} exp(s_ia/τ)).

    The "L_out" form of the paper; the mean runs over anchors with at least one
    positive. The paper code's extra factor τ/τ_base (τ_base = 0.07) is left out.
    """

    param_help: ClassVar[dict[str, str]] = {
        "temperature": "τ, divides the cosine similarities (unitless, > 0)",
    }

    def __init__(self, *, temperature: float = 0.1, **base: Any) -> None:
        super().__init__(**base)
        check_option("temperature", temperature, low=0, low_open=True)
        self.temperature = temperature

    def compute_loss(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return supervised_contrastive(embeddings, labels, self.temperature)
