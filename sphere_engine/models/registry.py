"""The ``MODELS`` registry: backbones that map inputs to raw embeddings, built by name.

Every constructor takes ``input_shape``, ``embedding_dim``, ``embedding_bn`` and
``weight_norm`` first (fixed arguments from the data and ``model.*``, not user options).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from torch import nn

from sphere_engine.registry import Registry

MODELS: Registry[nn.Module] = Registry(
    "model",
    "model.options",
    fixed_args=("input_shape", "embedding_dim", "embedding_bn", "weight_norm"),
)


def create_model(
    name: str,
    input_shape: Sequence[int],
    embedding_dim: int,
    embedding_bn: bool = False,
    weight_norm: bool = False,
    **options: Any,
) -> nn.Module:
    """Build backbone ``name`` for inputs of ``input_shape`` ((C, H, W) or (D,)).

    The model maps a batch (N, *input_shape) to raw embeddings (N, embedding_dim).
    Unknown names or options raise ``ValueError``.
    """
    shape = tuple(int(s) for s in input_shape)
    if not shape or any(s < 1 for s in shape):
        raise ValueError(f"input_shape: {tuple(input_shape)!r} must be non-empty and positive")
    return MODELS.create(name, shape, embedding_dim, embedding_bn, weight_norm, **options)
