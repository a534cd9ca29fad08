"""Parameter counts of the backbones, for the launch form (computed on the meta device)."""

from __future__ import annotations

import functools

import torch

from sphere_engine.models.registry import MODELS, create_model


@functools.cache
def parameter_count(name: str, embedding_dim: int = 512) -> int | None:
    """Trainable parameters of backbone ``name`` with an ``embedding_dim`` embedding,
    at its default image size (None when it cannot be built without more options).
    No weights are allocated: the model is built on the meta device."""
    side = getattr(MODELS.get(name), "default_image_size", None) or 32
    shape = (3, side, side) if name != "mlp" else (64,)
    try:
        with torch.device("meta"):
            model = create_model(name, shape, embedding_dim)
    except (ValueError, TypeError):
        return None
    return sum(p.numel() for p in model.parameters())
