"""Resuming a run from a checkpoint: the step count continues, the states are loaded."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from sphere_engine.tracking import InMemoryTracker
from sphere_engine.train import load_checkpoint, run_training
from sphere_engine.training.resume import latest_checkpoint
from tests.sphere_engine.test_train import digits_config


def test_resume_continues_the_step_count_from_the_checkpoint(tmp_path: Path) -> None:
    first = digits_config(
        training={"steps": 4, "checkpoint_dir": str(tmp_path), "checkpoint_every": 2}
    )
    run_training(first, InMemoryTracker())
    saved = latest_checkpoint(tmp_path)
    assert saved is not None and saved.name == "step_00000004.pt"

    config = digits_config(training={"steps": 7, "checkpoint_dir": str(tmp_path)})
    tracker = InMemoryTracker()
    result = run_training(config, tracker, resume_from=saved)

    assert result.steps_completed == 7
    assert sorted({step for step, name, *_ in tracker.scalars if name == "loss/total"}) == [5, 6, 7]
    assert [step for step, _ in tracker.checkpoints] == [7]
    # the optimiser went on from the saved state: Adam's step counter is 4 + 3
    state = load_checkpoint(tmp_path / "step_00000007.pt")["optimizer"]["state"]
    assert float(next(iter(state.values()))["step"]) == 7.0


def test_a_checkpoint_of_another_model_is_refused_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "step_00000002.pt"
    torch.save({"step": 2, "model": {}, "objective": {}, "optimizer": {}}, bad)
    with pytest.raises(ValueError, match=r"step_00000002\.pt: cannot resume"):
        run_training(digits_config(), InMemoryTracker(), resume_from=bad)


def test_latest_checkpoint_is_none_for_a_folder_without_one(tmp_path: Path) -> None:
    assert latest_checkpoint(tmp_path / "missing") is None
    (tmp_path / "notes.txt").write_text("x")
    assert latest_checkpoint(tmp_path) is None
