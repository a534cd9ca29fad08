"""The ``REGULARIZERS`` registry: norm regularisers added to a loss by composition.

Every constructor takes ``embedding_dim`` and ``num_classes`` first (fixed arguments,
not user options; most regularisers ignore them).
"""

from __future__ import annotations

from torch import nn

from sphere_engine.registry import Registry

REGULARIZERS: Registry[nn.Module] = Registry(
    "regularizer", "regularizer.options", fixed_args=("embedding_dim", "num_classes")
)
