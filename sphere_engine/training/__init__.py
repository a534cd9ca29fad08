"""Training's parts: set-up (``prepare_training``), one step (``train_step``),
checkpoints and the reporting of logged steps. ``sphere_engine.train`` is the loop that
puts them together."""

from sphere_engine.training.checkpoint import (
    apply_retention,
    checkpoint_file_name,
    checkpoint_path_is_current,
    load_checkpoint,
    save_checkpoint,
)
from sphere_engine.training.device import resolve_device, seed_everything
from sphere_engine.training.reporting import StepReporter, divergence_message
from sphere_engine.training.setup import TrackedSamples, TrainingSetup, prepare_training
from sphere_engine.training.step import StepOutcome, train_step

__all__ = [
    "StepOutcome",
    "StepReporter",
    "TrackedSamples",
    "TrainingSetup",
    "apply_retention",
    "checkpoint_file_name",
    "checkpoint_path_is_current",
    "divergence_message",
    "load_checkpoint",
    "prepare_training",
    "resolve_device",
    "save_checkpoint",
    "seed_everything",
    "train_step",
]
