"""``L2NormRegularizer``: pull every embedding towards the origin."""

from __future__ import annotations

import torch

from sphere_engine.regularizers.base_regularizer import BaseRegularizer
from sphere_engine.regularizers.norm_deviation import radii
from sphere_engine.regularizers.registry import REGULARIZERS


@REGULARIZERS.register("l2")
class L2NormRegularizer(BaseRegularizer):
    """L = (1/N) Σ_i ||f_i||² (the "μ = 0" ablation of SEC; N-pair's own penalty).

    Gradient: ∂L/∂f_i = 2 f_i / N. No options, no diagnostics.
    """

    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return radii(embeddings, centre="origin", power=2).mean()
