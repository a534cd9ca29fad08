# ruff: noqa: RUF009 - option() returns dataclasses.field(...) with help metadata
"""The ``model`` section of the run config: the backbone, its embedding and its weights."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sphere_engine.config.fields import option


@dataclass
class ModelConfig:
    name: str = option(
        "mlp", "Backbone (a registered model name)", registry="model", label="Backbone"
    )
    embedding_dim: int = option(
        64, "Dimension d of the embedding", min=1, max=65536, label="Embedding dimension"
    )
    embedding_bn: bool = option(
        False,
        "BatchNorm on the embedding (before any normalisation)",
        label="BatchNorm on the embedding",
    )
    weight_norm: bool = option(
        False,
        "Weight normalisation on the last (embedding) layer",
        label="Weight norm on the last layer",
    )
    options: dict[str, Any] = option(
        {}, "Options of the chosen backbone (see its option list)", label="Backbone options"
    )
    pretrained: bool | str = option(
        False,
        "Initial weights: a .pth/.pt/.safetensors file (torchvision or timm state dict, "
        "classifier dropped), true for the local torch-hub / timm cache (never downloaded), "
        "or false for random init",
        label="Pretrained weights",
    )
    frozen_bn: bool | None = option(
        None,
        "Keep the backbone's BatchNorm statistics fixed (default: on with pretrained weights)",
        label="Frozen BatchNorm statistics",
    )
