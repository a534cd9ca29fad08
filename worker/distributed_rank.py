"""One rank of a multi-device run: ``python -m worker.distributed_rank CONFIG RUN_ID HOME
AGENT_PID RESULT``, started by ``worker.distributed_run.run_distributed``'s elastic agent
(which sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, ...).

It joins the process group (NCCL on its CUDA device, else gloo) and runs
``run_training`` with its ``DataParallel``. Rank 0 alone opens the run's store tracker,
reads the cancel flag and writes its ``TrainingResult`` as JSON to RESULT. An error is
written for the agent by torch elastic's ``record`` (the run's failure message).
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import json
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from torch.distributed.elastic.multiprocessing.errors import record

from db.lifecycle import CANCEL_POLL_S
from db.store import RunStore
from db.throttle import throttled
from sphere_engine.config import RunConfig
from sphere_engine.train import TrainingResult

if TYPE_CHECKING:
    from sphere_engine.parallel import DataParallel

PR_SET_PDEATHSIG = 1


def die_with(agent_pid: int) -> None:
    """This rank is killed when the agent that started it dies (Linux), so no rank
    outlives the process that records the run."""
    if not sys.platform.startswith("linux"):
        return
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
    if os.getppid() != agent_pid:  # the agent died before the line above took effect
        os.kill(os.getpid(), signal.SIGKILL)


@contextlib.contextmanager
def joined_process_group(config: RunConfig) -> Iterator[DataParallel]:
    """Join the job's process group (NCCL on this rank's CUDA device, else gloo) from the
    environment its launcher set (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
    MASTER_ADDR, MASTER_PORT); this rank's ``DataParallel``; leave the group at the end.
    Shared by the elastic agent's ranks and a SLURM job's tasks."""
    import torch
    import torch.distributed as dist

    from sphere_engine.parallel import DataParallel
    from sphere_engine.train import resolve_device

    device = resolve_device(config.training.device)
    if device.type == "cuda":
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    # the machine's thread budget is shared by its ranks, not taken by each
    local_world = int(os.environ["LOCAL_WORLD_SIZE"])
    torch.set_num_threads(max(1, torch.get_num_threads() // local_world))
    dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    try:
        yield DataParallel.from_process_group()
    finally:
        dist.destroy_process_group()


def train_rank(config: RunConfig, run_id: str, store: RunStore) -> TrainingResult:
    """Join the process group, train this rank's share, leave the group."""
    from sphere_engine.tracking import BaseTracker
    from sphere_engine.train import run_training

    with joined_process_group(config) as parallel:
        if not parallel.is_main:
            return run_training(config, BaseTracker(), None, parallel=parallel)
        tracker = store.tracker(run_id)
        should_stop = throttled(lambda: store.cancel_requested(run_id), CANCEL_POLL_S)
        try:
            own_dir = str(store.checkpoint_dir(run_id))  # rank 0 writes the checkpoints
            return run_training(
                config, tracker, should_stop, parallel=parallel, checkpoint_dir=own_dir
            )
        finally:
            tracker.wait_for_compaction()


@record
def main(argv: list[str]) -> None:
    config_file, run_id, home, agent_pid, result_file = argv
    die_with(int(agent_pid))
    config = RunConfig.from_json(Path(config_file).read_text(encoding="utf-8"))
    result = train_rank(config, run_id, RunStore(home))
    if int(os.environ["RANK"]) == 0:
        Path(result_file).write_text(json.dumps(dataclasses.asdict(result)), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
