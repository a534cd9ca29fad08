"""``JobRank``: which process of a data-parallel job this is, declared once.

The SDK's ``distributed.DistributedContext``, the engine loop's
``parallel.DataParallel`` and a SLURM task's ``worker.slurm.ranks.SlurmRanks`` are each
a ``JobRank`` with what their part adds (the process group; the loop's collectives;
the rendezvous), so "am I rank 0", "is this a job of several processes" have one
answer. Torch-free: the SLURM submit path imports it on a login node.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class JobRank:
    """A process's place in its job: ``rank`` of ``world_size``, ``local_rank`` on its
    node (one process: rank 0 of 1)."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @property
    def is_distributed(self) -> bool:
        """A job of several processes (collectives are needed)."""
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        """Rank 0: the one process that writes (the store, checkpoints, evaluations)."""
        return self.rank == 0
