"""Checkpoints: the state dicts of a run at a step, written atomically."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from sphere_engine.catalogue import main_metric
from sphere_engine.catalogue.facts import checkpoint_file_name
from sphere_engine.catalogue.retention import checkpoint_step, kept_steps
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


def apply_retention(
    directory: str | Path,
    policy: str,
    evaluated: Mapping[int, Mapping[str, float]],
    *,
    finished: bool = False,
) -> list[Path]:
    """Remove the checkpoints in ``directory`` that ``training.keep_checkpoints`` does
    not keep (``sphere_engine.catalogue.retention``), scored by the main metric of the
    evaluations so far (step → metrics); the files removed."""
    folder = Path(directory)
    try:
        files = {step: folder / name for name in os.listdir(folder)
                 if (step := checkpoint_step(name)) is not None}  # fmt: skip
    except FileNotFoundError:
        return []
    scores = {}
    for step, metrics in evaluated.items():
        key = main_metric(metrics)
        if key is not None:
            scores[step] = float(metrics[key])
    horizon = max(evaluated, default=None)
    keep = kept_steps(policy, files, scores, horizon, finished=finished)
    removed = [path for step, path in sorted(files.items()) if step not in keep]
    for path in removed:
        path.unlink(missing_ok=True)
    return removed
