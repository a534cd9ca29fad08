"""A run's backbone from ``model.*``: built, its pretrained weights loaded, BatchNorm frozen."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import torch
from torch import nn

from sphere_engine.config.config_error import ConfigError
from sphere_engine.models.backbone import Backbone
from sphere_engine.models.pretrained import (
    PretrainedWeights,
    check_pretrained,
    load_pretrained,
    wants_pretrained,
)
from sphere_engine.models.registry import create_model

if TYPE_CHECKING:
    from sphere_engine.config.model_section import ModelConfig


def _create(config: ModelConfig, input_shape: Sequence[int]) -> nn.Module:
    return create_model(
        config.name,
        input_shape,
        config.embedding_dim,
        embedding_bn=config.embedding_bn,
        weight_norm=config.weight_norm,
        **config.options,
    )


def frozen_batchnorm(config: ModelConfig) -> bool:
    """``model.frozen_bn``, defaulting to on exactly when weights are pretrained."""
    if config.frozen_bn is None:
        return wants_pretrained(config.pretrained)
    return config.frozen_bn


def build_backbone(
    config: ModelConfig, input_shape: Sequence[int]
) -> tuple[nn.Module, PretrainedWeights | None]:
    """The backbone of a run and the weights it starts from (None: random init)."""
    model = _create(config, input_shape)
    weights = None
    if wants_pretrained(config.pretrained):
        weights = load_pretrained(model, config.pretrained, config.name)
    if isinstance(model, Backbone):
        model.freeze_batchnorm(frozen_batchnorm(config))
    return model, weights


def check_backbone(config: ModelConfig, input_shape: Sequence[int]) -> None:
    """Launch-time checks without allocating weights: the backbone builds for this
    input (on the meta device) and its pretrained file exists, reads and fits."""
    with torch.device("meta"):
        model = _create(config, input_shape)
    if wants_pretrained(config.pretrained):
        check_pretrained(model, config.pretrained, config.name)
    elif config.frozen_bn and not isinstance(model, Backbone):
        raise ConfigError("model.frozen_bn", f"backbone {config.name!r} has no BatchNorm to freeze")
