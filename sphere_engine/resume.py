"""Resuming a run from its last checkpoint (written by ``train.save_checkpoint``): the
model, objective and optimiser states and the step to continue after. The step count,
the learning-rate schedule and what the tracker appends continue from that step; the
batch order restarts from the seed (the sampler keeps no state worth a checkpoint)."""

from __future__ import annotations

import re
from pathlib import Path

import torch

CHECKPOINT_NAME = re.compile(r"^step_(\d{8})\.pt$")


def latest_checkpoint(directory: str | Path) -> Path | None:
    """The checkpoint of the highest step in ``directory`` (None when there is none)."""
    folder = Path(directory)
    if not folder.is_dir():
        return None
    found = [(int(m.group(1)), p) for p in folder.iterdir() if (m := CHECKPOINT_NAME.match(p.name))]
    return max(found)[1] if found else None


def restore_checkpoint(
    path: str | Path,
    model: torch.nn.Module,
    objective: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
) -> int:
    """Load the states saved in ``path`` into the given parts; the step it was saved at."""
    state = torch.load(path, map_location="cpu", weights_only=True)
    try:
        model.load_state_dict(state["model"])
        objective.load_state_dict(state["objective"])
        optimizer.load_state_dict(state["optimizer"])
        return int(state["step"])
    except (KeyError, RuntimeError, ValueError) as error:
        raise ValueError(f"checkpoint {path}: cannot resume from it ({error})") from None
