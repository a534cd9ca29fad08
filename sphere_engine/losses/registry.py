"""The ``LOSSES`` registry: pair losses on normalised embeddings, built by name.

``embedding_regularizer`` and ``embedding_reg_weight`` are fixed arguments: every loss
takes them (through ``BaseLoss``) but they are not user options of a loss, so they are
left out of ``LOSSES.params(name)`` and of the launch form.
"""

from __future__ import annotations

from torch import nn

from sphere_engine.registry import Registry

LOSSES: Registry[nn.Module] = Registry(
    "loss", "objective.options", fixed_args=("embedding_regularizer", "embedding_reg_weight")
)
