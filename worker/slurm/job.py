"""What runs inside a run's SLURM job: ``SlurmRunJob``, the picklable callable submitit
sends. It trains the run in-process into the store, as ``spherescope train`` does. In a
job of several tasks (``training.devices`` > 1: GPUs per node × nodes, or gloo ranks on
CPU) every task runs it as one rank of the run (``ranks.SlurmRanks``) through the
distributed-runs machinery (``worker.distributed_rank.joined_process_group``); rank 0
alone holds the run's ``RunLifecycle`` (claim, heartbeat, tracker, status, checkpoints)
and decides, at the start, whether and from where every rank trains (``JobPlan``).

Signals (installed over submitit's own, in every task's main thread) only ask the
training loop to stop; the ranks agree on the step, rank 0 writes a final checkpoint and
decides the outcome:

- the run's cancel flag is set (``spherescope cancel``, the dashboard): ``cancelled``;
- the time limit: the job reads its end time from SLURM and stops a margin before it
  (SLURM's warning, ``--signal=USR2@N``, may come up to a minute early, and its SIGTERM
  at the limit leaves only KillWait seconds): ``failed`` with "SLURM time limit (N min)
  reached at step S";
- SIGTERM because a node of the job went down (``sinfo``, at that moment): ``lost``
  with SLURM's reason for the node ("SLURM: node N (reason) failed at step S");
- a preemption: SIGTERM (``scontrol requeue``, PreemptMode=REQUEUE), or submitit's
  preemption signal (USR2) well before the limit. The run stays ``running`` and the job
  hands itself over through submitit's checkpointing protocol: ``checkpoint()`` returns
  the callable that resumes the run from its last checkpoint, dumped as the job's
  submitted pickle, which the requeued job runs (SLURM requeues after its SIGTERM;
  after USR2 the job requeues itself, as submitit's handler does). The resumed job
  records the requeue in the status's ``requeues`` (shown on the Run page).
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import submitit

from db import run_log
from db.heartbeat import heartbeat_interval
from db.lifecycle import RunLifecycle, RunNotStartable
from db.remote import writer_store
from db.write_errors import release_space
from db.writer_store import WriterStore
from sphere_engine.config import RunConfig
from worker.slurm.commands import SlurmError, run_slurm
from worker.slurm.ranks import SlurmRanks
from worker.slurm.request import SlurmRequest

if TYPE_CHECKING:
    from sphere_engine.parallel import DataParallel
    from sphere_engine.train import TrainingResult

log = logging.getLogger(__name__)

REQUEUED = "requeued"
#: SLURM may send the ``--signal`` this much before its set time (its own slack)
SIGNAL_SLACK_S = 60


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
    """Which of SLURM's signals this task received (set from the handlers). USR2 is
    submitit's signal: before the limit (``--signal``, the end time rules) or, well
    before it, a preemption."""

    preempt_before: float = float("inf")  # a USR2 before this time is a preemption
    terminate: bool = False  # SIGTERM: scancel, preemption, requeue, or the time limit
    preempted: bool = False
    received: list[str] = field(default_factory=list)

    def install(self) -> JobSignals:
        signal.signal(signal.SIGTERM, self._on_term)
        signal.signal(signal.SIGUSR2, self._on_usr2)
        return self

    def _on_term(self, signum: int, frame: FrameType | None) -> None:
        self.terminate = True
        self.received.append("SIGTERM")

    def _on_usr2(self, signum: int, frame: FrameType | None) -> None:
        self.preempted = self.preempted or time.time() < self.preempt_before
        self.received.append("SIGUSR2")

    @property
    def stop(self) -> bool:
        return self.terminate or self.preempted


@dataclass(frozen=True)
class JobPlan:
    """Rank 0's word to every rank at the start: train or not, until when, from where."""

    train: bool
    stop_at: float = 0.0
    resume: str | None = None


def share(plan: JobPlan | None, parallel: DataParallel) -> JobPlan:
    """Rank 0's ``plan``, on every rank (a broadcast; the plan itself on one process)."""
    if not parallel.is_distributed:
        assert plan is not None
        return plan
    import torch.distributed as dist

    box = [plan]
    dist.broadcast_object_list(box, src=0)
    return box[0]


class SlurmRunJob(submitit.helpers.Checkpointable):
    """Train run ``run_id`` of the store at ``home``; ``time_min``: the job's time limit;
    ``resume_from``: the checkpoint ``checkpoint()`` named for a requeued job."""

    def __init__(
        self, home: str, run_id: str, time_min: int, resume_from: str | None = None
    ) -> None:
        self.home, self.run_id, self.time_min = home, run_id, time_min
        self.resume_from = resume_from

    def checkpoint(self, *args: Any, **kwargs: Any) -> submitit.helpers.DelayedSubmission:
        """submitit's checkpointing protocol: what the requeued job runs. The run's state
        is in its store folder: the same run, from its last checkpoint."""
        from sphere_engine.training.resume import latest_checkpoint

        latest = latest_checkpoint(self._checkpoint_dir(writer_store(self.home)))
        same = SlurmRunJob(self.home, self.run_id, self.time_min, latest and str(latest))
        return submitit.helpers.DelayedSubmission(same)

    def __call__(self) -> str:
        from sphere_engine.parallel import SINGLE_PROCESS

        signals = JobSignals().install()
        ranks = SlurmRanks.from_environment()
        if ranks.world_size == 1:
            return self._lead(signals, SINGLE_PROCESS)
        from worker.distributed_rank import joined_process_group

        ranks.export()
        config = RunConfig.from_dict(writer_store(self.home).get_run(self.run_id).config)
        with joined_process_group(config) as parallel:
            if parallel.is_main:
                return self._lead(signals, parallel)
            return self._follow(config, signals, parallel)

    # ---- rank 0: the run's one writer
    def _lead(self, signals: JobSignals, parallel: DataParallel) -> str:
        """Rank 0, the run's one writer; the run's outcome.

        1. Plan: arm the preemption warning before the job's end, resume when SLURM
           requeued a started job (status running or lost), claim the run
           (``RunLifecycle.start``; a run no longer startable ends here with its status).
           Whatever happens, every rank receives the plan (``share``), so the followers
           never wait on a lead that failed.
        2. Train (``_train``) with the run's log captured; an exception is recorded by
           the lifecycle (``finish(error)``) and raised again.
        3. Hand over: a run stopped by SLURM stays running and the job requeues itself
           with its checkpoint (``_hand_over``); any other outcome ends the lifecycle.
        """
        plan = JobPlan(train=False)
        try:
            end = job_end_time(self.time_min)
            warning = SlurmRequest(time_min=self.time_min).signal_delay_s + SIGNAL_SLACK_S
            signals.preempt_before = end - warning
            store = writer_store(self.home)
            record = store.get_run(self.run_id)
            resume = None
            if record.status in ("running", "lost"):  # started before: SLURM requeued the job
                resume = self._prepare_resume(store, record.extra)
            lifecycle = RunLifecycle(
                store, self.run_id, heartbeat_s=heartbeat_interval(), accept_running=True
            )
            try:
                lifecycle.start()
            except RunNotStartable as skipped:
                return skipped.status
            plan = JobPlan(True, end - limit_margin_s(self.time_min), resume)
        finally:
            share(plan, parallel)  # every rank waits for it, whatever happened here
        with run_log.capture(store.run_dir(self.run_id)):
            try:
                outcome = self._train(lifecycle, signals, plan, parallel)
            except BaseException as error:
                lifecycle.finish(error)
                raise
        if outcome == REQUEUED:
            _leave_running(lifecycle)
            self._hand_over(requeue_now=not signals.terminate)
        else:
            lifecycle.finish()
        return outcome

    def _prepare_resume(self, store: WriterStore, extra: dict[str, Any]) -> str | None:
        from sphere_engine.training.resume import latest_checkpoint

        named = self.resume_from and Path(self.resume_from)
        checkpoint = named if named and named.exists() else None
        checkpoint = checkpoint or latest_checkpoint(self._checkpoint_dir(store))
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

    def _checkpoint_dir(self, store: WriterStore) -> str:
        config = store.get_run(self.run_id).config
        return config.get("training", {}).get("checkpoint_dir") or str(
            store.checkpoint_dir(self.run_id)
        )

    def _train(
        self, run: RunLifecycle, signals: JobSignals, plan: JobPlan, parallel: DataParallel
    ) -> str:
        """Train the run until it ends or ``plan.stop_at`` (the job's time limit less a
        margin), then say why it stopped, in this order: a user's cancel (cancelled),
        the time limit (failed), a failed node of the job (lost), SLURM's signal to stop
        (``REQUEUED``: the status stays running, waiting to resume), else finished.
        Every outcome but the requeue is recorded here with the run's device."""
        from sphere_engine.train import run_training  # torch: only inside the job

        store = run.store
        # validated when it was submitted; the stored dict is that config, never changed
        config = RunConfig.from_dict(store.get_run(self.run_id).config)

        def should_stop() -> bool:
            return signals.stop or time.time() >= plan.stop_at or run.should_stop()

        result = run_training(
            config,
            run.tracker,
            should_stop,
            parallel=parallel,
            resume_from=plan.resume,
            checkpoint_dir=self._checkpoint_dir(store),
        )
        step, device = result.steps_completed, _device(result, parallel)
        if result.cancelled and store.cancel_requested(self.run_id):
            reason = store.cancel_reason(self.run_id) or "cancelled"
            run.end("cancelled", f"{reason} at step {step}", device=device)
            return "cancelled"
        if result.cancelled and time.time() >= plan.stop_at:
            message = f"SLURM time limit ({self.time_min} min) reached at step {step}"
            run.end("failed", message, device=device)
            return "failed"
        failed = failed_nodes() if result.cancelled and signals.terminate else ""
        if failed:  # SLURM killed the job because a node of it went down
            run.end("lost", f"SLURM: node {failed} failed at step {step}", device=device)
            return "lost"
        if result.cancelled:  # SLURM's signal, to this rank or another
            log.warning("run %s: stopped by SLURM at step %d, requeued", self.run_id, step)
            store.set_status(
                self.run_id, "running", f"stopped by SLURM at step {step}; waiting to resume"
            )
            return REQUEUED
        run.end("finished", result.message, device=device)
        return "finished"

    def _hand_over(self, requeue_now: bool) -> None:
        """submitit's checkpointing protocol: ``checkpoint()``'s callable becomes the job's
        submitted pickle, which the requeued job loads. After SIGTERM SLURM requeues the
        job itself; after a preemption's USR2 the job requeues itself, as submitit's own
        handler does (``JobEnvironment._requeue``: ``scontrol requeue``)."""
        environment = submitit.JobEnvironment()
        pickle = environment.paths.submitted_pickle
        following = self.checkpoint()
        following.set_timeout(self.time_min, 0)
        partial = pickle.with_name(pickle.name + ".next")
        following.dump(partial)
        partial.replace(pickle)  # atomic: a requeued job never reads half a pickle
        if requeue_now:
            environment._requeue(0)

    # ---- ranks 1..N-1: train their share, write nothing
    def _follow(self, config: RunConfig, signals: JobSignals, parallel: DataParallel) -> str:
        from sphere_engine.tracking import BaseTracker
        from sphere_engine.train import run_training

        plan = share(None, parallel)
        if not plan.train:
            return "not started"
        run_training(
            config,
            BaseTracker(),
            lambda: signals.stop or time.time() >= plan.stop_at,
            parallel=parallel,
            resume_from=plan.resume,
        )
        return f"rank {parallel.rank} done"


def failed_nodes() -> str:
    """The nodes of this job that SLURM holds down or failed, with its reason for each
    (``vm (disk on fire)``); "" when none is (or SLURM cannot say)."""
    nodes = os.environ.get("SLURM_JOB_NODELIST", "")
    if not nodes:
        return ""
    try:
        output = run_slurm("sinfo", "-h", "-N", "-n", nodes, "-t", "down,fail", "-o", "%N|%E")
    except SlurmError:
        return ""
    failed = dict(line.split("|", 1) for line in output.splitlines() if "|" in line)
    return ", ".join(f"{node} ({why.strip() or 'no reason given'})" for node, why in failed.items())


def _device(result: TrainingResult, parallel: DataParallel) -> str:
    return f"{result.device} ×{parallel.world_size}" if parallel.is_distributed else result.device


def _leave_running(run: RunLifecycle) -> None:
    """Stop the heartbeat and flush, leaving the run ``running`` for the requeued job."""
    try:
        run.tracker.flush()
    finally:
        run.heartbeat.__exit__(None, None, None)
        release_space(run.store.run_dir(run.run_id))
