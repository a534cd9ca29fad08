"""``LinearHead``: plain softmax classifier (a linear layer with bias on raw features)."""

from __future__ import annotations

from typing import ClassVar

import torch
from torch import nn

from sphere_engine.heads.classifier_head import ClassifierHead
from sphere_engine.heads.registry import HEADS


@HEADS.register("linear")
class LinearHead(ClassifierHead):
    """logits = W f + b on raw (un-normalised) features; no margin, labels are ignored."""

    param_help: ClassVar[dict[str, str]] = {}

    def __init__(self, embedding_dim: int, num_classes: int) -> None:
        super().__init__(embedding_dim, num_classes)
        self.linear = nn.Linear(self.embedding_dim, self.num_classes, bias=True)

    @property
    def weight(self) -> torch.Tensor:
        """Class weights, K × d."""
        return self.linear.weight

    @property
    def bias(self) -> torch.Tensor:
        """Class biases, K."""
        return self.linear.bias

    def compute_logits(self, embeddings: torch.Tensor, labels: torch.Tensor | None) -> torch.Tensor:
        return self.linear(embeddings)
