"""Which process of a data-parallel job this is: rank, world size, and the group to talk over.

Detected from an initialised ``torch.distributed`` process group (Lightning, HF
Accelerate / Trainer and ``torchrun`` scripts that call ``init_process_group``), else
from the launcher's environment: ``RANK`` / ``WORLD_SIZE`` / ``LOCAL_RANK`` (torchrun,
Accelerate, Lightning's ddp subprocesses) or ``SLURM_PROCID`` / ``SLURM_NTASKS`` /
``SLURM_LOCALID`` (``srun``; only with ``MASTER_ADDR`` and ``MASTER_PORT`` set, since
``srun`` also runs independent tasks). A job found from the environment alone gets
the default process group initialised here (``env://``), so ``init_process_group``
must come before, not after, when the user calls it too; a group initialised here is
destroyed at interpreter exit (``atexit``) unless the script destroyed it first.

SphereScope talks over the default group (or one the caller passes). Its gathers —
one of them inside the backward pass, for the gradients — are issued at the same
point of the same program on every rank (the forward pass, and a tensor hook that
autograd runs in the same order everywhere), so they keep the same order relative to
DistributedDataParallel's all-reduces on every rank, which is all a group needs. A
group of its own (``new_group``) is not made: after an elastic restart the agent's
store still holds the first attempt's addresses, and a new gloo group can connect to
a dead rank's.
"""

from __future__ import annotations

import atexit
import os
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist

from sphere_engine.job_rank import JobRank

__all__ = ["DistributedContext", "detect", "launcher_world", "single_process"]


@dataclass(frozen=True)
class DistributedContext(JobRank):
    """One process's place in the job (``JobRank``) and the group it talks over;
    ``group`` is None for a single process."""

    source: str = "single process"  # how it was detected, for messages and the run record
    # the ProcessGroup the caller chose; None: the default group. The default group is
    # not held: a reference kept past ``destroy_process_group`` makes torch (2.13, gloo)
    # abort the process at exit ("terminate called without an active exception"), and
    # a ``Run`` lives as long as the user's script
    group: Any = None

    @property
    def backend(self) -> str:
        return str(dist.get_backend(self.group)) if self.is_distributed else "none"

    def device(self, like: torch.device) -> torch.device:
        """Where this group's collectives need their tensors: NCCL on the GPU, gloo on CPU."""
        if self.backend == "nccl":
            return (
                like if like.type == "cuda" else torch.device("cuda", torch.cuda.current_device())
            )
        return torch.device("cpu")


def single_process() -> DistributedContext:
    return DistributedContext()


def launcher_world() -> tuple[int, int, int, str] | None:
    """(rank, world size, local rank, launcher) from the environment, None when the
    environment describes no multi-process job."""
    env = os.environ
    if "RANK" in env and "WORLD_SIZE" in env:
        rank, world = _int_env("RANK"), _int_env("WORLD_SIZE")
        local = _int_env("LOCAL_RANK") if "LOCAL_RANK" in env else rank
        launcher = "torchrun" if "TORCHELASTIC_RUN_ID" in env else "environment"
    elif "SLURM_PROCID" in env and "SLURM_NTASKS" in env and _has_rendezvous():
        rank, world = _int_env("SLURM_PROCID"), _int_env("SLURM_NTASKS")
        local = _int_env("SLURM_LOCALID") if "SLURM_LOCALID" in env else rank
        launcher = "srun"
    else:
        return None
    if world < 1 or not 0 <= rank < world:
        raise ValueError(f"distributed environment: rank {rank} is not within world size {world}")
    return (rank, world, local, launcher) if world > 1 else None


def detect(group: Any = None) -> DistributedContext:
    """This process's context; initialises the default process group when only the
    launcher's environment describes the job. ``group``: talk over this group instead
    of the default one (all ranks must pass the same)."""
    if dist.is_available() and dist.is_initialized():
        world = dist.get_world_size()
        if world == 1:
            return single_process()
        source = "process group"
    else:
        found = launcher_world()
        if found is None:
            return single_process()
        rank, world, local, launcher = found
        _initialise(rank, world, local)
        source = launcher
    local = _int_env("LOCAL_RANK") if "LOCAL_RANK" in os.environ else dist.get_rank()
    return DistributedContext(dist.get_rank(), world, local, source, group)


def _initialise(rank: int, world: int, local_rank: int) -> None:
    missing = [name for name in ("MASTER_ADDR", "MASTER_PORT") if not os.environ.get(name)]
    if missing:
        raise ValueError(
            f"distributed environment: world size {world} but {' and '.join(missing)} not set "
            "and no process group initialised: call torch.distributed.init_process_group first"
        )
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    if backend == "nccl":
        # NCCL needs one GPU per rank, and its object collectives (the run id) use the
        # current device: the launcher's local rank picks it, as torchrun scripts do
        torch.cuda.set_device(local_rank % torch.cuda.device_count())
    dist.init_process_group(backend, init_method="env://", rank=rank, world_size=world)
    atexit.register(_destroy_at_exit)


def _destroy_at_exit() -> None:
    """Destroy the default group this module initialised, while the interpreter is
    still whole. Left for the interpreter's teardown, a gloo worker thread that ends a
    finished collective's work after the teardown has begun needs the GIL to release
    the tensors Python had handed it, cannot take it, and exits through C++ frames that
    do not allow it: torch (2.13) aborts the process ("terminate called without an
    active exception", SIGABRT; a quarter of 2-rank torchrun jobs whose last collective
    came just before the exit). Destroying the group joins those threads first."""
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def _has_rendezvous() -> bool:
    return bool(os.environ.get("MASTER_ADDR")) and bool(os.environ.get("MASTER_PORT"))


def _int_env(name: str) -> int:
    raw = os.environ[name]
    try:
        return int(raw)
    except ValueError:
        raise ValueError(
            f"distributed environment: {name} must be an integer, got {raw!r}"
        ) from None
