"""The ``HEADS`` registry: classifier heads, built by name.

Every head takes the fixed arguments ``embedding_dim`` and ``num_classes`` (not user
options) and returns logits of shape (N, K) from raw embeddings of shape (N, d).
"""

from __future__ import annotations

from torch import nn

from sphere_engine.registry import Registry

HEADS: Registry[nn.Module] = Registry(
    "head", "objective.options", fixed_args=("embedding_dim", "num_classes")
)
