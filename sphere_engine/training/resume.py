"""Resuming a run from its last checkpoint (written by ``save_checkpoint``): the
model, objective and optimiser states and the step to continue after. The step count,
the learning-rate schedule and what the tracker appends continue from that step; the
batch order restarts from the seed (the sampler keeps no state worth a checkpoint)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from sphere_engine.training.checkpoint import load_checkpoint

if TYPE_CHECKING:
    from sphere_engine.training.setup import TrainingSetup

CHECKPOINT_NAME = re.compile(r"^step_(\d{8})\.pt$")


def latest_checkpoint(directory: str | Path) -> Path | None:
    """The checkpoint of the highest step in ``directory`` (None when there is none)."""
    folder = Path(directory)
    if not folder.is_dir():
        return None
    found = [(int(m.group(1)), p) for p in folder.iterdir() if (m := CHECKPOINT_NAME.match(p.name))]
    return max(found)[1] if found else None


def resume(setup: TrainingSetup, path: str | Path) -> int:
    """Load the states saved in ``path`` into the set-up's model, objective, optimiser
    and early-stopping watch; the step it was saved at (the loop continues after it)."""
    state = load_checkpoint(path)
    try:
        setup.model.load_state_dict(state["model"])
        setup.objective.load_state_dict(state["objective"])
        setup.optimizer.load_state_dict(state["optimizer"])
        if "watch" in state:  # checkpoints written before early stopping have none
            setup.watch.load_state_dict(state["watch"])
        return int(state["step"])
    except (KeyError, RuntimeError, ValueError) as error:
        raise ValueError(f"checkpoint {path}: cannot resume from it ({error})") from None
