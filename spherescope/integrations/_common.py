"""Pieces shared by the framework callbacks: owning a run, and pulling embeddings."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch

from spherescope.run import Run


def pooled(output: Any, pooling: str | Callable[[Any], torch.Tensor]) -> torch.Tensor:
    """N × d embeddings from a module's output: the first tensor of a tuple or a model
    output, then ``"first"`` token (B × T × H → B × H), ``"mean"`` over tokens, or a callable."""
    if callable(pooling):
        return pooling(output)
    if isinstance(output, Mapping):
        output = next(iter(output.values()))
    elif isinstance(output, (tuple, list)):
        output = output[0]
    if not isinstance(output, torch.Tensor):
        raise ValueError(f"module output is not a tensor: {type(output).__name__}")
    if output.ndim == 3:
        if pooling == "first":
            return output[:, 0]
        if pooling == "mean":
            return output.mean(dim=1)
        raise ValueError(f"pooling must be 'first', 'mean' or a callable, got {pooling!r}")
    if output.ndim != 2:
        raise ValueError(f"embeddings must be N × d, the module gave {tuple(output.shape)}")
    return output  # the tensor itself: a gradient hook on a view would never fire


class RunOwner:
    """A run given by the user (left open) or started on first use (ended by us)."""

    def __init__(self, run: Run | None, init_kwargs: dict[str, Any]) -> None:
        self.run = run
        self.owned = run is None
        self.init_kwargs = init_kwargs

    def ensure(self, launcher: str | None = None) -> Run:
        """The run; started here (on every rank of a data-parallel job: one run per
        job) when the user gave none. ``launcher``: the framework's strategy."""
        if self.run is None:
            import spherescope

            kwargs = dict(self.init_kwargs)
            kwargs.setdefault("launcher", launcher)
            self.run = spherescope.init(**kwargs)
        return self.run

    def end(self, status: str = "finished", message: str = "") -> None:
        if self.owned and self.run is not None and not self.run.ended:
            self.run.finish(status, message)


class Collected:
    """Evaluation embeddings and labels gathered batch by batch (on the host)."""

    def __init__(self) -> None:
        self.embeddings: list[torch.Tensor] = []
        self.labels: list[torch.Tensor] = []

    def add(self, embeddings: torch.Tensor, labels: Any) -> None:
        self.embeddings.append(embeddings.detach().float().cpu())
        self.labels.append(torch.as_tensor(labels).detach().reshape(-1).cpu())

    def take(self) -> tuple[torch.Tensor, torch.Tensor] | None:
        if not self.embeddings:
            return None
        result = torch.cat(self.embeddings), torch.cat(self.labels)
        self.embeddings, self.labels = [], []
        return result
