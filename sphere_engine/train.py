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
from sphere_engine.evaluation import Evaluator
from sphere_engine.evaluation.background import BackgroundEvaluations
from sphere_engine.evaluation.final_test import run_final_test
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
from sphere_engine.training.early_stopping import ValidationWatch
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
    stopped_early: bool = False
    message: str = ""  # the finished run's status message ("stopped early at step N: ...")


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
    stopped_early, message = False, ""
    waiting: QueuedStep | None = None  # the step queued on the device, not yet read
    final_metrics: dict[str, float] = {}
    watch = setup.watch
    evaluations = BackgroundEvaluations(
        setup.evaluator, background=setup.config.evaluation.background, on_result=watch.observe
    )
    setup.model.train()
    try:
        while step < training.steps:
            # ---- cooperative cancel or early stop: checked every iteration (all ranks
            # stop together; rank 0 alone evaluates, so only it knows of an early stop)
            asked = should_stop is not None and should_stop()
            if stop_agreed(asked or watch.should_stop):
                stopped_early = watch.should_stop and not asked
                cancelled = not stopped_early
                message = watch.stop_message(step) if stopped_early else ""
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

            # ---- periodic evaluation (the validation classes with folds, else the test
            # split; and at the end), on rank 0: embeddings taken now, metrics computed
            # beside the loop, tracked when done
            if is_main:
                evaluations.collect(tracker, step)
            if is_main and eval_due:
                reporter.report()
                evaluate(
                    setup, evaluations, tracker, step, final=step == training.steps, watch=watch
                )

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
        if is_main and (cancelled or stopped_early) and step and step % diagnostics.eval_every:
            evaluate(setup, evaluations, tracker, step, final=True, watch=watch)
        final_metrics = evaluations.drain(tracker, step)  # the run waits for the last one
        last_saved = checkpoint_path_is_current(checkpoint_path, step)
        if is_main and setup.checkpoint_dir and step and not last_saved:
            checkpoint_path = write_checkpoint(setup, tracker, step)
        # ---- the final test: once, after everything else (the checkpoint keeps the
        # last step's weights; the test may load the best validation evaluation's)
        if is_main and setup.config.evaluation.final_test and step and not cancelled:
            reporter.report()
            final_metrics = final_metrics | final_test(setup, watch, tracker, step)
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
    return TrainingResult(
        step,
        cancelled,
        final_metrics,
        checkpoint_path,
        str(setup.device),
        stopped_early=stopped_early,
        message=message,
    )


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
    watch: ValidationWatch,
) -> None:
    """Embed the evaluated split now, hand the metrics to ``evaluations``, back to
    training (``watch`` copies the weights when it keeps the best)."""
    watch.captured(step, setup.model)
    captured = setup.evaluator.capture(setup.model, setup.objective, final=final)
    setup.model.train()
    evaluations.submit(captured, step, tracker)


def final_test(
    setup: TrainingSetup, watch: ValidationWatch, tracker: Tracker, step: int
) -> dict[str, float]:
    """``evaluation.final_test``: the one evaluation on the test split (all of it, its
    protocol), with the best validation evaluation's weights where they were kept."""
    if watch.best_weights is not None:
        setup.model.load_state_dict(watch.best_weights)
    evaluator = Evaluator(setup.splits, setup.config, setup.device, final_test=True)
    metrics = run_final_test(
        evaluator, setup.model, setup.objective, tracker, step, setup.checkpoint_dir
    )
    setup.model.train()
    return metrics


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
        setup.watch.state_dict(),
    )
    tracker.track_checkpoint(path, step)
    return path
