"""``CosFaceHead``: large margin cosine loss (Wang et al. 2018), s·(cos θ − m) on the target."""

from __future__ import annotations

from typing import ClassVar

import torch

from sphere_engine.config.option_checks import check_option
from sphere_engine.heads.cosine_classifier_head import CosineClassifierHead
from sphere_engine.heads.margins import additive_cosine_margin, replace_target, target_cosine
from sphere_engine.heads.registry import HEADS


@HEADS.register("cosface")
class CosFaceHead(CosineClassifierHead):
    """logits_j = s·cos θ_j, target s·(cos θ_y − m) when labels are given."""

    param_help: ClassVar[dict[str, str]] = {
        "scale": "s: logit scale applied to cos θ",
        "margin": "m: additive COSINE margin subtracted from the target cos θ "
        "(a cosine difference, unitless, not an angle; typical 0.35-0.4)",
    }

    def __init__(
        self, embedding_dim: int, num_classes: int, scale: float = 64.0, margin: float = 0.35
    ) -> None:
        super().__init__(embedding_dim, num_classes)
        self.scale = check_option("scale", scale, low=0, low_open=True)
        self.margin = check_option("margin", margin, low=0)

    def compute_logits(self, embeddings: torch.Tensor, labels: torch.Tensor | None) -> torch.Tensor:
        cosine = self.cosine(embeddings)
        if labels is not None:
            target = additive_cosine_margin(target_cosine(cosine, labels), self.margin)
            cosine = replace_target(cosine, labels, target)
        return self.scale * cosine
