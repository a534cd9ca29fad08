"""``BaseRegularizer``: the interface every embedding regulariser follows."""

from __future__ import annotations

from typing import ClassVar

import torch
from torch import nn

from sphere_engine.config.option_checks import check_option
from sphere_engine.registry import ComponentTraits


class BaseRegularizer(nn.Module):
    """``reg(embeddings, labels) -> scalar`` on raw embeddings, plus ``diagnostics()``.

    ``registered_name`` is set by ``REGULARIZERS.register``; a loss logs the term under
    it in ``last_terms``.
    """

    registered_name: ClassVar[str] = ""
    # Most regularisers take d and K only for a uniform signature and ignore them.
    traits: ClassVar[ComponentTraits] = ComponentTraits()
    param_help: ClassVar[dict[str, str]] = {}

    def __init__(self, embedding_dim: int, num_classes: int) -> None:
        super().__init__()
        self.embedding_dim = check_option("embedding_dim", embedding_dim, low=1, integer=True)
        self.num_classes = check_option("num_classes", num_classes, low=1, integer=True)
        self._diagnostics: dict[str, torch.Tensor] = {}

    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """The penalty of N × d raw ``embeddings`` with N ``labels``; a 0-dim tensor."""
        raise NotImplementedError

    def diagnostics(self) -> dict[str, torch.Tensor]:
        """Detached 0-dim statistics of the last call (empty before the first)."""
        return dict(self._diagnostics)
