"""``ClassifierHead``: the base class of every head (checks inputs, then computes logits)."""

from __future__ import annotations

from typing import ClassVar

import torch
from torch import nn

from sphere_engine.config.option_checks import check_option
from sphere_engine.registry import ComponentTraits


class ClassifierHead(nn.Module):
    """Maps raw embeddings (N × d) to logits (N × K).

    Subclasses write only ``compute_logits``. Margins are applied only when labels are
    given, so evaluation logits (``labels=None``) are margin-free.
    """

    #: Every head is built for d-dimensional embeddings and K classes; fixed heads
    #: (class weights that are buffers, never trained) say ``is_fixed=True``.
    traits: ClassVar[ComponentTraits] = ComponentTraits(
        needs_num_classes=True, needs_embedding_dim=True
    )
    #: Option name → help text (with units) for the launch form.
    param_help: ClassVar[dict[str, str]] = {}

    def __init__(self, embedding_dim: int, num_classes: int) -> None:
        super().__init__()
        self.embedding_dim = check_option("embedding_dim", embedding_dim, low=1, integer=True)
        self.num_classes = check_option("num_classes", num_classes, low=1, integer=True)

    @property
    def is_fixed(self) -> bool:
        """True when the class weights are fixed buffers (from ``traits``)."""
        return self.traits.is_fixed

    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor | None = None) -> torch.Tensor:
        """Logits (N × K) from raw embeddings (N × d) and optional integer labels (N)."""
        if embeddings.dim() != 2 or embeddings.shape[1] != self.embedding_dim:
            raise ValueError(
                f"embeddings: expected shape (N, {self.embedding_dim}), "
                f"got {tuple(embeddings.shape)}"
            )
        if labels is not None:
            if labels.shape != (embeddings.shape[0],):
                raise ValueError(
                    f"labels: expected shape ({embeddings.shape[0]},), got {tuple(labels.shape)}"
                )
            if labels.dtype.is_floating_point or labels.dtype == torch.bool:
                raise ValueError(f"labels: expected an integer tensor, got {labels.dtype}")
            labels = labels.long()
        return self.compute_logits(embeddings, labels)

    def compute_logits(self, embeddings: torch.Tensor, labels: torch.Tensor | None) -> torch.Tensor:
        """Logits (N × K); ``labels`` (N, int64) or None for margin-free logits."""
        raise NotImplementedError

    def extra_repr(self) -> str:
        return f"embedding_dim={self.embedding_dim}, num_classes={self.num_classes}"
