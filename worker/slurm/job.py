"""What runs inside a run's SLURM job: ``SlurmRunJob``, the picklable callable submitit
sends. It trains the run in-process into the store, as ``spherescope train`` does.

Signals (installed over submitit's own, in the job's main thread) only ask the training
loop to stop; the loop then writes a final checkpoint and the outcome is decided here:

- the run's cancel flag is set (``spherescope cancel``, the dashboard): ``cancelled``;
- the time limit: the job reads its end time from SLURM and stops a margin before it
  (SLURM's warning, ``--signal=USR2@N``, may come up to a minute early, and its SIGTERM
  at the limit leaves only KillWait seconds): ``failed`` with "SLURM time limit (N min)
  reached at step S";
- any other SIGTERM (preemption, ``scontrol requeue``): the run stays ``running`` and the
  job exits; SLURM starts the job again, and the same callable, finding its run started
  and a checkpoint in its folder, resumes from it as the same run (the requeue is
  recorded in the status's ``requeues``). ``checkpoint()`` (submitit's protocol, called
  when submitit handles the signal itself) returns this same callable for that reason.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import time
from dataclasses import dataclass, field
from datetime import datetime
from types import FrameType
from typing import Any

import submitit

from db import run_log
from db.heartbeat import heartbeat_interval
from db.lifecycle import RunLifecycle, RunNotStartable
from db.store import RunStore
from db.write_errors import release_space
from sphere_engine.config import RunConfig
from worker.slurm.commands import SlurmError, run_slurm

log = logging.getLogger(__name__)

REQUEUED = "requeued"


def limit_margin_s(time_min: int) -> float:
    """How long before its time limit a run stops to save its checkpoint (seconds)."""
    return max(5.0, min(60.0, time_min * 60 * 0.1))


def job_end_time(time_min: int) -> float:
    """When SLURM ends this job (epoch seconds): its EndTime, else now + the limit."""
    fallback = time.time() + time_min * 60
    job = os.environ.get("SLURM_JOB_ID")
    if not job:
        return fallback
    try:
        text = run_slurm("squeue", "-h", "-j", job, "-o", "%e").strip()
        return datetime.fromisoformat(text).timestamp()
    except (SlurmError, ValueError):
        return fallback


@dataclass
class JobSignals:
    """Which of SLURM's signals the job received (set from the handlers)."""

    terminate: bool = False  # SIGTERM: scancel, preemption, requeue, or the time limit
    limit_warning: bool = False  # the --signal before the limit (the end time rules)
    received: list[str] = field(default_factory=list)

    def install(self) -> JobSignals:
        signal.signal(signal.SIGTERM, self._on_term)
        signal.signal(signal.SIGUSR2, self._on_warning)
        return self

    def _on_term(self, signum: int, frame: FrameType | None) -> None:
        self.terminate = True
        self.received.append("SIGTERM")

    def _on_warning(self, signum: int, frame: FrameType | None) -> None:
        self.limit_warning = True
        self.received.append("SIGUSR2")


class SlurmRunJob(submitit.helpers.Checkpointable):
    """Train run ``run_id`` of the store at ``home``; ``time_min``: the job's time limit."""

    def __init__(self, home: str, run_id: str, time_min: int) -> None:
        self.home, self.run_id, self.time_min = home, run_id, time_min

    def checkpoint(self, *args: Any, **kwargs: Any) -> submitit.helpers.DelayedSubmission:
        """The run's state is in its store folder: the same callable resumes it."""
        same = SlurmRunJob(self.home, self.run_id, self.time_min)
        return submitit.helpers.DelayedSubmission(same)

    def __call__(self) -> str:
        signals = JobSignals().install()
        stop_at = job_end_time(self.time_min) - limit_margin_s(self.time_min)
        store = RunStore(self.home)
        record = store.get_run(self.run_id)
        resume = None
        if record.status in ("running", "lost"):  # started before: SLURM requeued the job
            resume = self._prepare_resume(store, record.status, record.extra)
        lifecycle = RunLifecycle(
            store, self.run_id, heartbeat_s=heartbeat_interval(), accept_running=True
        )
        try:
            lifecycle.start()
        except RunNotStartable as skipped:
            return skipped.status
        with run_log.capture(store.run_dir(self.run_id)):
            try:
                outcome = self._train(lifecycle, signals, stop_at, resume)
            except BaseException as error:
                lifecycle.finish(error)
                raise
        if outcome == REQUEUED:
            _leave_running(lifecycle)
        else:
            lifecycle.finish()
        return outcome

    def _prepare_resume(self, store: RunStore, status: str, extra: dict[str, Any]) -> str | None:
        from sphere_engine.training.resume import latest_checkpoint

        checkpoint = latest_checkpoint(self._checkpoint_dir(store))
        step = checkpoint and int(checkpoint.stem.split("_")[1])
        requeues = [*extra.get("requeues", []), {"at": time.time(), "step": step or 0}]
        where = f"step {step}" if checkpoint else "the start (no checkpoint)"
        store.set_status(
            self.run_id,
            "running",
            f"resumed from {where} after a SLURM requeue",
            requeues=requeues,
            host=socket.gethostname(),
            pid=os.getpid(),
        )
        return str(checkpoint) if checkpoint else None

    def _checkpoint_dir(self, store: RunStore) -> str:
        config = store.get_run(self.run_id).config
        return config.get("training", {}).get("checkpoint_dir") or str(
            store.checkpoint_dir(self.run_id)
        )

    def _train(
        self, run: RunLifecycle, signals: JobSignals, stop_at: float, resume: str | None
    ) -> str:
        from sphere_engine.train import run_training  # torch: only inside the job

        store = run.store
        # validated when it was submitted; the stored dict is that config, never changed
        config = RunConfig.from_dict(store.get_run(self.run_id).config)

        def should_stop() -> bool:
            return signals.terminate or time.time() >= stop_at or run.should_stop()

        result = run_training(
            config,
            run.tracker,
            should_stop,
            resume_from=resume,
            checkpoint_dir=self._checkpoint_dir(store),
        )
        step = result.steps_completed
        at_limit = time.time() >= stop_at
        if result.cancelled and store.cancel_requested(self.run_id):
            reason = store.cancel_reason(self.run_id) or "cancelled"
            run.end("cancelled", f"{reason} at step {step}", device=result.device)
            return "cancelled"
        if result.cancelled and at_limit:
            message = f"SLURM time limit ({self.time_min} min) reached at step {step}"
            run.end("failed", message, device=result.device)
            return "failed"
        if result.cancelled and signals.terminate:
            log.warning("run %s: SIGTERM at step %d, the job is requeued", self.run_id, step)
            store.set_status(
                self.run_id, "running", f"stopped by SLURM at step {step}; waiting to resume"
            )
            return REQUEUED
        run.end("finished", device=result.device)
        return "finished"


def _leave_running(run: RunLifecycle) -> None:
    """Stop the heartbeat and flush, leaving the run ``running`` for the requeued job."""
    try:
        run.tracker.flush()
    finally:
        run.heartbeat.__exit__(None, None, None)
        release_space(run.store.run_dir(run.run_id))
