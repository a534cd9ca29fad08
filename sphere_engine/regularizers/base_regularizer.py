"""``BaseRegularizer``: the interface every embedding regulariser follows."""

from __future__ import annotations

from typing import ClassVar

import torch
from torch import nn


class BaseRegularizer(nn.Module):
    """``reg(embeddings, labels) -> scalar`` on raw embeddings, plus ``diagnostics()``.

    ``name`` is the registry name; a loss logs the term under it in ``last_terms``.
    """

    name: ClassVar[str] = ""
    param_help: ClassVar[dict[str, str]] = {}

    def __init__(self, embedding_dim: int, num_classes: int) -> None:
        super().__init__()
        for field, value in (("embedding_dim", embedding_dim), ("num_classes", num_classes)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{field}: {value!r} is not allowed; it must be an int >= 1")
        self.embedding_dim = embedding_dim
        self.num_classes = num_classes
        self._diagnostics: dict[str, torch.Tensor] = {}

    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """The penalty of N × d raw ``embeddings`` with N ``labels``; a 0-dim tensor."""
        raise NotImplementedError

    def diagnostics(self) -> dict[str, torch.Tensor]:
        """Detached 0-dim statistics of the last call (empty before the first)."""
        return dict(self._diagnostics)
