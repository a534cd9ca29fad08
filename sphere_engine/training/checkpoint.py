"""Checkpoints: the state dicts of a run at a step, written atomically."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from sphere_engine.catalogue.facts import checkpoint_file_name
from sphere_engine.config import RunConfig


def save_checkpoint(
    directory: str,
    step: int,
    config: RunConfig,
    model: torch.nn.Module,
    objective: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    watch: dict[str, Any] | None = None,
) -> str:
    """Write state dicts (and the config as plain JSON types) to ``step_<n>.pt``;
    ``watch``: the early-stopping watch's state (``ValidationWatch.state_dict``)."""
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    target = path / checkpoint_file_name(step)
    temporary = target.with_suffix(".pt.tmp")
    torch.save(
        {
            "step": step,
            "config": config.to_dict(),
            "model": model.state_dict(),
            "objective": objective.state_dict(),
            "optimizer": optimizer.state_dict(),
            **({"watch": watch} if watch is not None else {}),
        },
        temporary,
    )
    temporary.replace(target)  # atomic: a reader never sees half a checkpoint
    return str(target)


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """Load a checkpoint written by ``save_checkpoint`` (tensors and plain types only)."""
    return torch.load(path, map_location="cpu", weights_only=True)


def checkpoint_path_is_current(path: str | None, step: int) -> bool:
    """Whether the last checkpoint written is the one of ``step`` (no need to re-save)."""
    return path is not None and Path(path).name == checkpoint_file_name(step)
