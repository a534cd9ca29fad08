"""``CenterLoss`` (Wen et al., ECCV 2016): pull features to learned class centres."""

from __future__ import annotations

from typing import ClassVar

import torch
from torch import nn

from sphere_engine.registry import ComponentTraits
from sphere_engine.regularizers.base_regularizer import BaseRegularizer
from sphere_engine.regularizers.registry import REGULARIZERS


@REGULARIZERS.register("center")
class CenterLoss(BaseRegularizer):
    """L = ½ (1/N) Σ_i ||f_i − c_{y_i}||², centres c an nn.Parameter (K × d).

    The centres are learned by the optimiser through ∂L/∂c_k = −(1/N) Σ_{y_i=k}
    (f_i − c_k) (instead of Wen et al.'s separate update rule with rate α); they start
    from a standard normal draw. Diagnostic ``center/mean_distance`` (mean ||f_i − c_{y_i}||).
    """

    traits: ClassVar[ComponentTraits] = ComponentTraits(
        needs_num_classes=True, needs_embedding_dim=True
    )

    def __init__(self, embedding_dim: int, num_classes: int) -> None:
        super().__init__(embedding_dim, num_classes)
        self.centres = nn.Parameter(torch.randn(num_classes, embedding_dim))

    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        if embeddings.dim() != 2 or embeddings.shape[1] != self.embedding_dim:
            raise ValueError(
                f"embeddings: expected N × {self.embedding_dim}, got {tuple(embeddings.shape)}"
            )
        if len(labels) and (labels.min() < 0 or labels.max() >= self.num_classes):
            raise ValueError(
                f"labels: values must be in 0..{self.num_classes - 1} (num_classes), got "
                f"min {int(labels.min())}, max {int(labels.max())}"
            )
        offsets = embeddings - self.centres[labels]  # N × d
        squared = (offsets**2).sum(dim=1)
        self._diagnostics = {"center/mean_distance": squared.detach().sqrt().mean()}
        return 0.5 * squared.mean()
