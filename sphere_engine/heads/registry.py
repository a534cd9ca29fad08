"""The ``head`` registry: build classifier heads by name.

Every head takes the fixed arguments ``embedding_dim`` and ``num_classes`` (not user
options) and returns logits of shape (N, K) from raw embeddings of shape (N, d).
"""

from __future__ import annotations

from typing import Any

from torch import nn

from sphere_engine.registry import Registry

HEADS: Registry[nn.Module] = Registry("head", fixed_args=("embedding_dim", "num_classes"))


def create_head(name: str, embedding_dim: int, num_classes: int, **kwargs: Any) -> nn.Module:
    """Build the head registered as ``name``; unknown names or options raise ``ValueError``."""
    return HEADS.create(name, embedding_dim, num_classes, **kwargs)


def list_heads() -> list[str]:
    """Names of all registered heads, sorted."""
    return HEADS.names()
