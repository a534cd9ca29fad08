"""``run_distributed``: one run trained by N data-parallel processes.

The caller (a worker's task through ``train_in_run``, or a SLURM job) holds the run's
``RunLifecycle``: claim, heartbeat and the end status stay in its process, which is
the elastic agent. ``torch.distributed.launcher.api.elastic_launch`` starts the N rank
processes (spawned; gloo on CPU, NCCL with one CUDA device each on GPU) and watches
them. Each rank runs ``sphere_engine.train.run_training`` with its ``DataParallel``;
rank 0 alone writes the store (metrics, evaluation, checkpoints) and reads the cancel
flag, which the ranks agree on at every step, so cancel and the stack's shutdown stop
them all together and the run ends ``cancelled`` as a one-process run does.

A rank that fails or is killed makes the agent stop the others; ``RankFailedError``
then names the rank and its error (or signal) and the run ends ``failed`` with it. A
rank whose agent dies (the worker's pool process killed) is killed by the kernel
(``PR_SET_PDEATHSIG``), so no rank outlives the process that records the run.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import sys
from typing import TYPE_CHECKING, Any

from db.store import RunStore
from sphere_engine.config import RunConfig

if TYPE_CHECKING:
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError

    from sphere_engine.train import TrainingResult

PR_SET_PDEATHSIG = 1


class RankFailedError(RuntimeError):
    """A rank of a multi-device run failed or died; the message names it."""


def run_distributed(
    config: RunConfig, run_id: str, devices: int, *, store: RunStore | None = None
) -> TrainingResult:
    """Train ``config`` as run ``run_id`` (live, claimed by the caller) in ``devices``
    processes on this machine; rank 0's ``TrainingResult`` (its ``device`` says how
    many processes shared the run)."""
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.launcher.api import LaunchConfig, elastic_launch

    store = store or RunStore()
    launch = LaunchConfig(
        min_nodes=1,
        max_nodes=1,
        nproc_per_node=devices,
        run_id=run_id,
        rdzv_backend="c10d",
        rdzv_endpoint=f"127.0.0.1:{_free_port()}",
        max_restarts=0,
        monitor_interval=0.2,
        start_method="spawn",
    )
    try:
        results = elastic_launch(launch, _train_rank)(
            config.to_dict(), run_id, str(store.home), os.getpid()
        )
    except ChildFailedError as error:
        raise RankFailedError(describe_rank_failure(error, devices)) from None
    result = results[0]
    result.device = f"{result.device} ×{devices}"
    return result


def describe_rank_failure(error: ChildFailedError, devices: int) -> str:
    """ "rank R of N failed: <its error>" (or "... was killed by SIGKILL") for the first
    rank that failed."""
    rank, failure = error.get_first_failure()
    if failure.exitcode < 0:
        return f"rank {rank} of {devices} was killed by {failure.signal_name()} (pid {failure.pid})"
    message: Any = failure.error_file_data.get("message", "")
    if isinstance(message, dict):  # written by ``record``: "<Type>: <error>" first
        message = message.get("message", "")
    text = str(message).strip().splitlines()[0] if str(message).strip() else ""
    return f"rank {rank} of {devices} failed: {text or f'exit code {failure.exitcode}'}"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _die_with(agent_pid: int) -> None:
    """This rank is killed when the agent that started it dies (Linux)."""
    if not sys.platform.startswith("linux"):
        return
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
    if os.getppid() != agent_pid:  # the agent died before the line above took effect
        os.kill(os.getpid(), signal.SIGKILL)


def _train_rank(config_data: dict[str, Any], run_id: str, home: str, agent_pid: int) -> Any:
    """One rank (a spawned process): join the group, train, leave the group."""
    from torch.distributed.elastic.multiprocessing.errors import record

    return record(_train_rank_recorded)(config_data, run_id, home, agent_pid)


def _train_rank_recorded(
    config_data: dict[str, Any], run_id: str, home: str, agent_pid: int
) -> TrainingResult:
    _die_with(agent_pid)
    import torch
    import torch.distributed as dist

    from db.lifecycle import CANCEL_POLL_S
    from db.throttle import throttled
    from sphere_engine.parallel import DataParallel
    from sphere_engine.tracking import BaseTracker
    from sphere_engine.train import resolve_device, run_training

    config = RunConfig.from_dict(config_data)
    local_rank = int(os.environ["LOCAL_RANK"])
    local_world = int(os.environ["LOCAL_WORLD_SIZE"])
    device = resolve_device(config.training.device)
    if device.type == "cuda":
        torch.cuda.set_device(local_rank)
    # the worker's thread budget is shared by its ranks, not taken by each
    torch.set_num_threads(max(1, torch.get_num_threads() // local_world))
    dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    try:
        parallel = DataParallel.from_process_group()
        store = RunStore(home)
        if parallel.is_main:
            tracker = store.tracker(run_id)
            should_stop = throttled(lambda: store.cancel_requested(run_id), CANCEL_POLL_S)
            try:
                return run_training(config, tracker, should_stop, parallel=parallel)
            finally:
                tracker.wait_for_compaction()
        return run_training(config, BaseTracker(), None, parallel=parallel)
    finally:
        dist.destroy_process_group()
