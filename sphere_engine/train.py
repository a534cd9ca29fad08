"""The training loop: ``run_training(config, tracker, should_stop) -> TrainingResult``.

Set-up is ``prepare_training`` (data, model, objective, optimiser, tracked samples,
evaluator); one step is ``train_step`` (forward, backward, diagnostics, optimiser step).
The loop reads top to bottom in commented phases (stop?, lr, data, step, report,
evaluation, checkpoint). It knows nothing of Celery, DuckDB or Streamlit: everything it
measures goes to ``tracker``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

from sphere_engine.config import RunConfig
from sphere_engine.errors import TrainingDivergedError
from sphere_engine.evaluation.background import BackgroundEvaluations
from sphere_engine.optim import apply_lr
from sphere_engine.parallel import SINGLE_PROCESS, DataParallel, StopAgreement
from sphere_engine.tracking import Tracker
from sphere_engine.training import (
    StepOutcome,
    StepReporter,
    TrainingSetup,
    apply_retention,
    checkpoint_path_is_current,
    load_checkpoint,
    prepare_training,
    resolve_device,
    save_checkpoint,
    train_step,
)
from sphere_engine.training.resume import resume

__all__ = [
    "TrainingDivergedError",
    "TrainingResult",
    "load_checkpoint",
    "resolve_device",
    "run_training",
    "save_checkpoint",
]


@dataclass
class TrainingResult:
    steps_completed: int
    cancelled: bool
    final_metrics: dict[str, float] = field(default_factory=dict)
    checkpoint_path: str | None = None
    device: str = "cpu"


def run_training(
    config: RunConfig,
    tracker: Tracker,
    should_stop: Callable[[], bool] | None = None,
    *,
    parallel: DataParallel = SINGLE_PROCESS,
    resume_from: str | Path | None = None,
    checkpoint_dir: str | None = None,
) -> TrainingResult:
    """Train ``config`` and report every statistic through ``tracker``; ``parallel``:
    this process's share of a data-parallel job (statistics over the global batch,
    evaluation and checkpoints on rank 0; see ``sphere_engine.parallel``); ``resume_from``:
    a checkpoint to continue from (its states and step); checkpoints go to
    ``training.checkpoint_dir``, else to ``checkpoint_dir``, else nowhere."""
    setup = prepare_training(config, parallel, checkpoint_dir)
    start_step = resume(setup, resume_from) if resume_from else 0
    tracker.track_run_info(setup.run_info())
    return train_loop(setup, tracker, should_stop, start_step)


def train_loop(
    setup: TrainingSetup,
    tracker: Tracker,
    should_stop: Callable[[], bool] | None = None,
    start_step: int = 0,
) -> TrainingResult:
    """Step from ``start_step`` until ``training.steps`` or ``should_stop()``; evaluate
    and checkpoint on the way and at the end."""
    training, diagnostics = setup.config.training, setup.config.diagnostics
    parallel, is_main = setup.parallel, setup.parallel.is_main
    needs_views = setup.objective.requires_views
    reporter = StepReporter(tracker)
    stop_agreed = StopAgreement(parallel, setup.device)  # every rank stops at one step
    step, cancelled, checkpoint_path = start_step, False, None
    waiting: QueuedStep | None = None  # the step queued on the device, not yet read
    final_metrics: dict[str, float] = {}
    evaluations = BackgroundEvaluations(
        setup.evaluator, background=setup.config.evaluation.background
    )
    setup.model.train()
    try:
        while step < training.steps:
            # ---- cooperative cancel: checked every iteration (all ranks stop together)
            if stop_agreed(should_stop is not None and should_stop()):
                cancelled = True
                break
            step += 1
            started = time.perf_counter()

            # ---- learning rate for this step
            lr = apply_lr(setup.optimizer, setup.lr_at(step))

            # ---- data (NT-Xent: two augmented views, labels = instance ids)
            inputs, labels, _ = next(setup.batches)
            if needs_views:
                inputs, labels = two_views(setup, inputs, labels)

            # ---- forward, backward, diagnostics, optimiser step: queued on the device
            logged = step % diagnostics.log_every == 0 or step == training.steps
            track = logged and tracks_samples(setup, step)
            outcome = train_step(setup, inputs, labels, logged=logged, track_samples=track)
            queued = QueuedStep(step, outcome, lr, started, len(labels) * parallel.world_size,
                                setup.tracked.id_list if track else [])  # fmt: skip

            # ---- report the previous step: reading it waits for its device work, not
            # for this step's (queued behind it); a non-finite loss ends the run there
            if waiting is not None:
                read_step(waiting, reporter, ended=started)
            waiting = queued
            # the model is evaluated or saved now: this step is read too (on every rank,
            # so that all ranks meet a divergence at the same step)
            eval_due = step % diagnostics.eval_every == 0 or step == training.steps
            if eval_due or checkpoint_due(setup, step):
                read_step(waiting, reporter)
                waiting = None
            # K steps waiting, the oldest waited ~0.5 s, or the last step: reported before
            # its progress, so the final progress line shows the final values
            if reporter.due() or step == training.steps:
                reporter.report()
            tracker.track_progress(step, training.steps)

            # ---- periodic evaluation on the test split (and at the end), on rank 0:
            # embeddings taken now, metrics computed beside the loop, tracked when done
            if is_main:
                evaluations.collect(tracker, step)
            if is_main and eval_due:
                reporter.report()
                evaluate(setup, evaluations, tracker, step, final=step == training.steps)

            # ---- periodic checkpoint
            if is_main and checkpoint_due(setup, step):
                reporter.report()
                checkpoint_path = write_checkpoint(setup, tracker, step)
                keep_checkpoints(setup, evaluations)

        # ---- end (finished or cancelled): the last queued step read, final evaluation
        # if it was not just done
        if waiting is not None:
            read_step(waiting, reporter)
            waiting = None
        if is_main and cancelled and step and step % diagnostics.eval_every:
            evaluate(setup, evaluations, tracker, step, final=True)
        final_metrics = evaluations.drain(tracker, step)  # the run waits for the last one
        last_saved = checkpoint_path_is_current(checkpoint_path, step)
        if is_main and setup.checkpoint_dir and step and not last_saved:
            checkpoint_path = write_checkpoint(setup, tracker, step)
        if is_main:
            keep_checkpoints(setup, evaluations, finished=True)
    except BaseException:
        if waiting is not None:  # the failed step's predecessor is kept, if it can be read
            with contextlib.suppress(Exception):
                read_step(waiting, reporter)
        raise
    finally:
        evaluations.close()
        try:
            reporter.report()  # finished, cancelled or failed: nothing logged is lost
        finally:
            tracker.flush()
    return TrainingResult(step, cancelled, final_metrics, checkpoint_path, str(setup.device))


@dataclass
class QueuedStep:
    """A step queued on the device, read on the host later."""

    step: int
    outcome: StepOutcome
    lr: float
    started: float  # perf_counter at the step's start
    samples: int  # in the global batch
    sample_ids: list[int]


def read_step(queued: QueuedStep, reporter: StepReporter, ended: float | None = None) -> None:
    """Read ``queued``'s values (waiting for its device work) and hand a logged step to
    the reporter; a non-finite loss ends the run. ``ended``: when the next step started
    (a step's time is the interval between step starts); None: now."""
    result = queued.outcome.read()
    if result.diverged:
        raise TrainingDivergedError(reporter.divergence_message(queued.step, result.loss))
    if result.host is None:
        return
    elapsed = (time.perf_counter() if ended is None else ended) - queued.started
    timing = {
        "lr": queued.lr,
        "time/step": elapsed,
        "time/samples_per_s": queued.samples / max(elapsed, 1e-9),
    }
    reporter.add(queued.step, result.host, timing, queued.sample_ids)


def tracks_samples(setup: TrainingSetup, step: int) -> bool:
    """Whether logged step ``step`` embeds the tracked samples: every
    ``diagnostics.tracked_every`` steps, the first logged step (the turns' start) and
    the last step."""
    tracked, config = setup.tracked, setup.config
    if not len(tracked.ids) or not setup.parallel.is_main:
        return False
    first = tracked.directions.previous is None
    last = step == config.training.steps
    return first or last or step % config.diagnostics.tracked_every == 0


def two_views(
    setup: TrainingSetup, inputs: torch.Tensor, labels: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Two augmented views of each sample, labelled by instance (self-supervised losses)."""
    instance = torch.arange(len(labels), device=setup.device) + setup.parallel.rank * len(labels)
    augment = setup.splits.augment
    return torch.cat([augment(inputs), augment(inputs)]), torch.cat([instance, instance])


def evaluate(
    setup: TrainingSetup,
    evaluations: BackgroundEvaluations,
    tracker: Tracker,
    step: int,
    *,
    final: bool,
) -> None:
    """Embed the test split now, hand the metrics to ``evaluations``, back to training."""
    captured = setup.evaluator.capture(setup.model, setup.objective, final=final)
    setup.model.train()
    evaluations.submit(captured, step, tracker)


def checkpoint_due(setup: TrainingSetup, step: int) -> bool:
    """Whether ``step`` is one of the periodic checkpoints."""
    every = setup.config.training.checkpoint_every
    return bool(setup.checkpoint_dir and every and step % every == 0)


def keep_checkpoints(
    setup: TrainingSetup, evaluations: BackgroundEvaluations, *, finished: bool = False
) -> None:
    """Remove the checkpoints ``training.keep_checkpoints`` does not keep."""
    if setup.checkpoint_dir:
        policy = setup.config.training.keep_checkpoints
        apply_retention(setup.checkpoint_dir, policy, evaluations.evaluated, finished=finished)


def write_checkpoint(setup: TrainingSetup, tracker: Tracker, step: int) -> str:
    """Save the run's state at ``step`` and tell the tracker where it is."""
    path = save_checkpoint(
        setup.checkpoint_dir,
        step,
        setup.config,
        setup.model,
        setup.objective,
        setup.optimizer,
    )
    tracker.track_checkpoint(path, step)
    return path
