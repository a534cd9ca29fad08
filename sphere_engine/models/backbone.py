"""The base of every backbone: a feature extractor, global pooling, the embedding layer.

A new backbone is one file: a subclass that builds its feature extractor and hands it
to ``Backbone.__init__`` with the width of its features. Everything else is shared:
``forward_features`` (the unpooled map, as timm names it), ``forward_head`` (pooling
and the ``EmbeddingLayer``), frozen BatchNorm statistics, and what the pretrained
weights loader needs (``weights_module``, the keys it re-initialises).
"""

from __future__ import annotations

from typing import ClassVar

from torch import Tensor, nn

from sphere_engine.models.embedding_layer import EmbeddingLayer
from sphere_engine.models.pooling import GlobalPool
from sphere_engine.registry import ComponentTraits

_BATCH_NORMS = (nn.modules.batchnorm._BatchNorm,)


class Backbone(nn.Module):
    """``features`` maps inputs to a feature map (N, C, H, W), tokens (N, T, C) or
    vectors (N, C) with C = ``num_features``; ``pooling`` (None for vectors) reduces it
    to (N, C) and the embedding layer maps that to raw embeddings (N, embedding_dim)."""

    traits: ClassVar[ComponentTraits] = ComponentTraits(needs_embedding_dim=True)
    param_help: ClassVar[dict[str, str]] = {}
    #: The side ``data.image_size`` defaults to for this backbone (None: not an image model).
    default_image_size: ClassVar[int | None] = None
    #: The smallest image side the architecture accepts.
    min_image_size: ClassVar[int] = 1
    #: Where ``model.pretrained = true`` looks ("" : no local cache is known).
    weights_source: ClassVar[str] = ""

    def __init__(
        self,
        features: nn.Module,
        num_features: int,
        embedding_dim: int,
        embedding_bn: bool = False,
        weight_norm: bool = False,
        pooling: str | None = None,
    ) -> None:
        super().__init__()
        self.features = features
        self.pool = GlobalPool(pooling) if pooling else nn.Identity()
        self.embedding = EmbeddingLayer(num_features, embedding_dim, embedding_bn, weight_norm)
        self.frozen_bn = False
        #: Weight-file keys the model replaces on purpose (a new stem): skipped on load.
        self.reinitialised_keys: set[str] = set()

    @classmethod
    def check_image_shape(cls, input_shape: tuple[int, ...], name: str) -> None:
        """The one refusal of inputs an image backbone cannot take."""
        if len(input_shape) != 3 or min(input_shape[1:]) < cls.min_image_size:
            raise ValueError(
                f"input_shape: {tuple(input_shape)!r} is not allowed for {name}; it needs "
                f"images (C, H, W) with H, W >= {cls.min_image_size}"
            )

    def weights_module(self) -> nn.Module:
        """The module whose state dict official weight files hold (classifier dropped)."""
        return self.features

    def forward_features(self, x: Tensor) -> Tensor:
        """The unpooled features of ``x`` (N, ...)."""
        return self.features(x)

    def forward_head(self, features: Tensor) -> Tensor:
        """Pooled features → raw embeddings (N, embedding_dim)."""
        return self.embedding(self.pool(features))

    def forward(self, x: Tensor) -> Tensor:
        return self.forward_head(self.forward_features(x))

    def freeze_batchnorm(self, frozen: bool = True) -> None:
        """Keep the feature extractor's BatchNorm statistics fixed while training (the
        DML default with pretrained weights: batches of few classes would skew them);
        their affine parameters still train. The embedding's BatchNorm is not frozen."""
        self.frozen_bn = frozen
        self.train(self.training)

    def train(self, mode: bool = True) -> Backbone:
        super().train(mode)
        if mode and self.frozen_bn:
            for module in self.features.modules():
                if isinstance(module, _BATCH_NORMS):
                    module.eval()
        return self
