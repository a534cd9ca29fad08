"""The ``HEADS`` registry: classifier heads, built by name.

Every head takes the fixed arguments ``embedding_dim`` and ``num_classes`` (not user
options) and returns logits of shape (N, K) from raw embeddings of shape (N, d).
"""

from __future__ import annotations

from typing import Any

from torch import nn

from sphere_engine.registry import Registry

HEADS: Registry[nn.Module] = Registry(
    "head", "objective.options", fixed_args=("embedding_dim", "num_classes")
)


def create_head(name: str, embedding_dim: int, num_classes: int, **options: Any) -> nn.Module:
    """Build the head ``name``; ``ValueError`` for an unknown name, option or value."""
    return HEADS.create(name, embedding_dim, num_classes, **options)


def list_heads() -> list[str]:
    """Registered head names, sorted."""
    return HEADS.names()
