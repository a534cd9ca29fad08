"""The training body shared by every run that SphereScope trains itself (a worker's task,
``spherescope train``, ``spherescope reproduce --local``): inside a live ``RunLifecycle``,
train and set the outcome. The lifecycle around it does the rest (claim, heartbeat, end
of run, failures)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from db.lifecycle import RunLifecycle
from sphere_engine.config import RunConfig
from sphere_engine.tracking import CompositeTracker, Tracker

if TYPE_CHECKING:
    from sphere_engine.train import TrainingResult


def train_in_run(
    run: RunLifecycle, config: RunConfig, progress: Tracker | None = None
) -> TrainingResult:
    """Train ``config`` as the live ``run``; a cancelled run ends with the cancel's reason
    (e.g. "stopped: the stack was shut down at step N"), otherwise ``finished``."""
    from sphere_engine.train import run_training  # torch: only in the training process

    # the run's own directory is passed, not written into the config: the config stays
    # the one validated and recorded (meta.json and every checkpoint hold the same)
    if config.training.devices > 1:  # rank 0 of its processes writes the run
        from worker.distributed_run import run_distributed

        result = run_distributed(config, run.run_id, config.training.devices, store=run.store)
    else:
        tracker = CompositeTracker(run.tracker, progress) if progress else run.tracker
        result = run_training(
            config, tracker, run.should_stop, checkpoint_dir=str(run.checkpoint_dir)
        )
    if result.cancelled:
        reason = run.store.cancel_reason(run.run_id) or "cancelled"
        run.end("cancelled", f"{reason} at step {result.steps_completed}", device=result.device)
    else:  # an early stop says so (its message)
        run.end("finished", result.message, device=result.device)
    return result
