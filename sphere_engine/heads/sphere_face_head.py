"""``SphereFaceHead``: A-Softmax (Liu et al. 2017), multiplicative angular margin ψ(θ)."""

from __future__ import annotations

from typing import ClassVar

import torch

from sphere_engine.config.option_checks import check_option
from sphere_engine.heads.cosine_classifier_head import CosineClassifierHead
from sphere_engine.heads.margins import (
    multiplicative_angular_margin,
    replace_target,
    target_cosine,
)
from sphere_engine.heads.registry import HEADS


@HEADS.register("sphereface")
class SphereFaceHead(CosineClassifierHead):
    """logits_j = s·cos θ_j, target s·ψ(θ_y) when labels are given.

    ψ(θ) = (−1)^k cos(mθ) − 2k for θ ∈ [kπ/m, (k+1)π/m]. Weights are normalised, no
    bias. With ``scale=None`` (the original A-Softmax) s = ||f|| per sample, so the
    feature norm is part of the logit; with a number, s is that fixed scale (the
    normalised "SphereFace-style" variant). ``softmax_blend`` λ mixes the target as
    (λ·cos θ + ψ(θ))/(1 + λ), as the paper does to ease early training (there λ is
    annealed from about 1000 down to about 5; here it stays fixed).
    """

    param_help: ClassVar[dict[str, str]] = {
        "margin": "m: multiplicative ANGULAR margin, an integer ≥ 1 (θ is multiplied by m; "
        "m = 1 means no margin; the paper uses 4)",
        "scale": "s: logit scale; empty/None = the feature norm ||f|| (original A-Softmax), "
        "a number = fixed scale on normalised features",
        "softmax_blend": "λ ≥ 0: target logit (λ·cos θ + ψ(θ))/(1 + λ); 0 = pure ψ",
    }

    def __init__(
        self,
        embedding_dim: int,
        num_classes: int,
        margin: int = 4,
        scale: float | None = None,
        softmax_blend: float = 0.0,
    ) -> None:
        super().__init__(embedding_dim, num_classes)
        self.margin = check_option("margin", margin, low=1, integer=True)
        self.scale = None if scale is None else check_option("scale", scale, low=0, low_open=True)
        self.softmax_blend = check_option("softmax_blend", softmax_blend, low=0)

    def compute_logits(self, embeddings: torch.Tensor, labels: torch.Tensor | None) -> torch.Tensor:
        cosine = self.cosine(embeddings)
        if labels is not None:
            cos_target = target_cosine(cosine, labels)
            psi = multiplicative_angular_margin(cos_target, self.margin)
            target = (self.softmax_blend * cos_target + psi) / (1.0 + self.softmax_blend)
            cosine = replace_target(cosine, labels, target)
        if self.scale is None:
            return embeddings.norm(dim=1, keepdim=True) * cosine
        return self.scale * cosine
