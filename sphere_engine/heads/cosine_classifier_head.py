"""``CosineClassifierHead``: shared base of the heads with learnable unit-norm weights."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from sphere_engine.heads.classifier_head import ClassifierHead


class CosineClassifierHead(ClassifierHead):
    """Holds a learnable ``weight`` (K × d); ``cosine`` gives cos θ_j (N × K), no bias."""

    def __init__(self, embedding_dim: int, num_classes: int) -> None:
        super().__init__(embedding_dim, num_classes)
        self.weight = nn.Parameter(torch.empty(self.num_classes, self.embedding_dim))
        nn.init.xavier_uniform_(self.weight)

    def cosine(self, embeddings: torch.Tensor) -> torch.Tensor:
        """cos θ_j between each embedding (N × d) and each class weight: (N × K)."""
        return F.linear(F.normalize(embeddings, dim=1), F.normalize(self.weight, dim=1))
