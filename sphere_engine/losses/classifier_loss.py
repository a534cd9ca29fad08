"""``ClassifierLoss``: softmax cross-entropy on a classifier head's logits."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from sphere_engine.losses.base_loss import BaseLoss


class ClassifierLoss(BaseLoss):
    """Cross-entropy on ``head(embeddings, labels)``.

    The head receives the labels, so margin heads (CosFace, ArcFace, ...) apply their
    margins. Not registered: heads are configured separately (``HEADS``).
    """

    def __init__(self, head: nn.Module, **base: Any) -> None:
        super().__init__(**base)
        self.head = head

    def compute_loss(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        logits = self.head(embeddings, labels)  # N × K
        num_classes = logits.shape[1]
        if labels.min() < 0 or labels.max() >= num_classes:
            raise ValueError(
                f"labels: values must be in 0..{num_classes - 1} (the head's classes), "
                f"got min {int(labels.min())}, max {int(labels.max())}"
            )
        return F.cross_entropy(logits, labels)
