"""``ClassifierLoss``: softmax cross-entropy on a classifier head's logits."""

from __future__ import annotations

from typing import Any, ClassVar

import torch
import torch.nn.functional as F
from torch import nn

from sphere_engine.losses.base_loss import BaseLoss
from sphere_engine.registry import ComponentTraits


class ClassifierLoss(BaseLoss):
    """Cross-entropy on ``head(embeddings, labels)``.

    The head receives the labels, so margin heads (CosFace, ArcFace, ...) apply their
    margins. Not registered: heads are configured separately (``HEADS``).
    """

    # Cross-entropy needs labels only, no pairs: any batch will do.
    traits: ClassVar[ComponentTraits] = ComponentTraits()

    def __init__(self, head: nn.Module, **base: Any) -> None:
        super().__init__(**base)
        self.head = head

    def compute_loss(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        # Checked before the head runs when it says how many classes it has, since a
        # margin head indexes its logits with the labels.
        known = getattr(self.head, "num_classes", None)
        if isinstance(known, int):
            check_labels(labels, known)
        logits = self.head(embeddings, labels)  # N × K
        check_labels(labels, logits.shape[1])
        return F.cross_entropy(logits, labels)


def check_labels(labels: torch.Tensor, num_classes: int) -> None:
    """Raise ``ValueError`` unless every label is in 0..num_classes − 1."""
    if labels.min() < 0 or labels.max() >= num_classes:
        raise ValueError(
            f"labels: values must be in 0..{num_classes - 1} (the head's classes), "
            f"got min {int(labels.min())}, max {int(labels.max())}"
        )
