"""The ``REGULARIZERS`` registry: norm regularisers added to a loss by composition.

Every constructor takes ``embedding_dim`` and ``num_classes`` first (fixed arguments,
not user options; most regularisers ignore them).
"""

from __future__ import annotations

from typing import Any

from torch import nn

from sphere_engine.registry import Registry

REGULARIZERS: Registry[nn.Module] = Registry(
    "regularizer", "regularizer.options", fixed_args=("embedding_dim", "num_classes")
)


def create_regularizer(
    name: str, embedding_dim: int, num_classes: int, **options: Any
) -> nn.Module:
    """Build the regulariser ``name``; ``ValueError`` for an unknown name, option or value."""
    return REGULARIZERS.create(name, embedding_dim, num_classes, **options)


def list_regularizers() -> list[str]:
    """Registered regulariser names, sorted."""
    return REGULARIZERS.names()
