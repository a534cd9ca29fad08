"""The ``LOSSES`` registry: pair losses on normalised embeddings, built by name.

``embedding_regularizer`` and ``embedding_reg_weight`` are fixed arguments: every loss
takes them (through ``BaseLoss``) but they are not user options of a loss, so they are
left out of ``LOSSES.params(name)`` and of the launch form.
"""

from __future__ import annotations

from typing import Any

from torch import nn

from sphere_engine.registry import Registry

LOSSES: Registry[nn.Module] = Registry(
    "loss", "objective.options", fixed_args=("embedding_regularizer", "embedding_reg_weight")
)


def create_loss(
    name: str,
    *,
    embedding_regularizer: nn.Module | None = None,
    embedding_reg_weight: float = 0.0,
    **options: Any,
) -> nn.Module:
    """Build the loss ``name`` with its ``options``; optionally plug in a regulariser.

    Raises ``ValueError`` for an unknown name (listing the known ones), an unknown
    option (listing the allowed ones) or an out-of-range option value.
    """
    return LOSSES.create(
        name,
        embedding_regularizer=embedding_regularizer,
        embedding_reg_weight=embedding_reg_weight,
        **options,
    )


def list_losses() -> list[str]:
    """Registered loss names, sorted."""
    return LOSSES.names()
