"""``NormFaceHead``: normalised softmax (Wang et al. 2017), logits s·cos θ."""

from __future__ import annotations

from typing import ClassVar

import torch

from sphere_engine.config.option_checks import check_option
from sphere_engine.heads.cosine_classifier_head import CosineClassifierHead
from sphere_engine.heads.registry import HEADS


@HEADS.register("normface")
class NormFaceHead(CosineClassifierHead):
    """logits_j = s·cos θ_j with normalised features and weights; no margin, fixed s."""

    param_help: ClassVar[dict[str, str]] = {
        "scale": "s: logit scale (temperature⁻¹) applied to cos θ; fixed, not learned",
    }

    def __init__(self, embedding_dim: int, num_classes: int, scale: float = 16.0) -> None:
        super().__init__(embedding_dim, num_classes)
        self.scale = check_option("scale", scale, low=0, low_open=True)

    def compute_logits(self, embeddings: torch.Tensor, labels: torch.Tensor | None) -> torch.Tensor:
        return self.scale * self.cosine(embeddings)
