"""The training objective: a pair loss, or a classifier head with cross-entropy, with
an optional norm regulariser composed in by keyword (SCIENCE.md §2, §3)."""

from __future__ import annotations

import torch
from torch import nn

from sphere_engine.config import RunConfig
from sphere_engine.losses.mining_record import MiningRecord


class Objective(nn.Module):
    """Wraps the configured loss so the loop sees one interface.

    ``forward(embeddings, labels) -> scalar``; ``last_terms`` holds the unweighted
    terms of the last call (``metric`` and the regulariser's name);
    ``regularizer_diagnostics()`` exposes e.g. the SEC target μ; ``head`` is the
    classifier head or ``None``.

    The loss owns the head and the regulariser; the objective only points at them
    (not as submodules), so each is saved once in the state dict, under ``loss.``.
    """

    def __init__(
        self, loss: nn.Module, head: nn.Module | None, regularizer: nn.Module | None
    ) -> None:
        super().__init__()
        self.loss = loss
        # plain references, kept out of ``_modules``: a module with two parents would be
        # written twice to every checkpoint and loaded twice
        self.__dict__["head"] = head
        self.__dict__["regularizer"] = regularizer
        # Read from the loss class's declared traits (the one source of this fact).
        self.requires_views = loss.traits.requires_views

    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return self.loss(embeddings, labels)

    @property
    def last_terms(self) -> dict[str, torch.Tensor]:
        return dict(self.loss.last_terms)

    def mining_record(self) -> MiningRecord | None:
        """What the pair loss's mining did on the last batch; None for a head or a loss
        without mining."""
        return getattr(self.loss, "last_mining", None)

    def regularizer_diagnostics(self) -> dict[str, torch.Tensor]:
        if self.regularizer is None:
            return {}
        return self.regularizer.diagnostics()


def build_objective(config: RunConfig, num_classes: int) -> Objective:
    """Loss (or head + cross-entropy) and regulariser from the config."""
    from sphere_engine.objective_parts import build_objective_parts

    parts = build_objective_parts(config, num_classes)
    return Objective(parts.loss, parts.head, parts.regularizer)
