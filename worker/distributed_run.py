"""``run_distributed``: one run trained by N data-parallel processes.

The caller (a worker's task through ``train_in_run``, or a SLURM job) holds the run's
``RunLifecycle``: claim, heartbeat and the end status stay in its process, which is
the elastic agent. ``torch.distributed.launcher.api.elastic_launch`` starts the N rank
processes (``python -m worker.distributed_rank``; gloo on CPU, NCCL with one CUDA
device each on GPU) and watches them. Each rank runs ``run_training`` with its
``DataParallel``; rank 0 alone writes the store (metrics, evaluation, checkpoints)
and reads the cancel flag, which the ranks agree on at every step, so cancel and the
stack's shutdown stop them all together and the run ends ``cancelled`` as a
one-process run does.

A rank that fails or is killed makes the agent stop the others; ``RankFailedError``
then names the rank and its error (or signal) and the run ends ``failed`` with it. A
rank whose agent dies (the worker's pool process killed) is killed by the kernel
(``PR_SET_PDEATHSIG``), so no rank outlives the process that records the run.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from db.store import RunStore
from sphere_engine.config import RunConfig

if TYPE_CHECKING:
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError

    from sphere_engine.train import TrainingResult


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
    )
    with tempfile.TemporaryDirectory(prefix="spherescope-ranks-") as scratch:
        config_file, result_file = Path(scratch, "config.json"), Path(scratch, "result.json")
        config_file.write_text(config.to_json(), encoding="utf-8")
        # a command, not a function: the ranks are plain subprocesses (a Celery pool
        # process may not start multiprocessing children)
        command = (sys.executable, "-m", "worker.distributed_rank")
        arguments = (str(config_file), run_id, str(store.home), str(os.getpid()), str(result_file))
        try:
            elastic_launch(launch, command[0])(*command[1:], *arguments)
        except ChildFailedError as error:
            raise RankFailedError(describe_rank_failure(error, devices)) from None
        result = read_result(result_file)
    result.device = f"{result.device} ×{devices}"
    return result


def read_result(path: Path) -> TrainingResult:
    """Rank 0's ``TrainingResult``, which it wrote as JSON to ``path``."""
    from sphere_engine.train import TrainingResult

    return TrainingResult(**json.loads(path.read_text(encoding="utf-8")))


def describe_rank_failure(error: ChildFailedError, devices: int) -> str:
    """ "rank R of N failed: <its error>" (or "... was killed by SIGKILL") for the first
    rank that failed. The agent stops the other ranks with SIGTERM once one fails, and
    their failures can carry the same time as the cause's: a rank that died otherwise
    is named first."""
    rank, failure = error.get_first_failure()
    if failure.exitcode == -signal.SIGTERM:
        causes = [(r, f) for r, f in error.failures.items() if f.exitcode != -signal.SIGTERM]
        if causes:
            rank, failure = min(causes, key=lambda item: (item[1].timestamp, item[0]))
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
