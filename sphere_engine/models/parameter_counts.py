"""Parameter counts of the backbones as built (on the meta device: no weights are
allocated); the torch-free declarations the Launch form shows
(``sphere_engine.catalogue.backbones``) are checked against these."""

from __future__ import annotations

import functools

import torch

from sphere_engine.catalogue.backbones import BACKBONE_SIZES
from sphere_engine.models.registry import MODELS, create_model


@functools.cache
def parameter_count(
    name: str, embedding_dim: int = 512, embedding_bn: bool = False, weight_norm: bool = False
) -> int | None:
    """Trainable parameters of backbone ``name`` with an ``embedding_dim`` embedding, at
    its declared reference input (else its default image size; None when it cannot be
    built without more options)."""
    declared = BACKBONE_SIZES.get(name)
    if declared is not None:
        shape = declared.reference_input
    else:
        side = getattr(MODELS.get(name), "default_image_size", None) or 32
        shape = (3, side, side)
    try:
        with torch.device("meta"):
            model = create_model(name, shape, embedding_dim, embedding_bn, weight_norm)
    except (ValueError, TypeError):
        return None
    return sum(p.numel() for p in model.parameters())
