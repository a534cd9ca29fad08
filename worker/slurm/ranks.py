"""A SLURM job's tasks as the ranks of one run. submitit's ``JobEnvironment`` gives each
task its global rank, local rank and the job's task and node counts; the first node of
the allocation hosts the rendezvous (MASTER_ADDR) on a port derived from the job id,
the same in every task and a new one after each requeue (the old port may linger)."""

from __future__ import annotations

import os
from dataclasses import dataclass

import submitit

from sphere_engine.job_rank import JobRank

PORT_BASE, PORT_SPAN = 20000, 20000


@dataclass(frozen=True)
class SlurmRanks(JobRank):
    """A task's place in its job (``JobRank``) and the job's rendezvous."""

    local_world_size: int = 1
    master_addr: str = "127.0.0.1"
    master_port: int = PORT_BASE

    @classmethod
    def from_environment(cls) -> SlurmRanks:
        """This task's place in its job (one rank outside a SLURM job step)."""
        if "SLURM_PROCID" not in os.environ:
            return cls()
        env = submitit.JobEnvironment()
        job = int(os.environ.get("SLURM_JOB_ID", "0"))
        restarts = int(os.environ.get("SLURM_RESTART_COUNT", "0"))
        return cls(
            rank=env.global_rank,
            local_rank=env.local_rank,
            world_size=env.num_tasks,
            local_world_size=max(1, env.num_tasks // env.num_nodes),
            master_addr=env.hostnames[0],
            master_port=PORT_BASE + (job * 8 + restarts) % PORT_SPAN,
        )

    def export(self) -> None:
        """Set what ``torch.distributed``'s ``env://`` rendezvous and
        ``worker.distributed_rank.joined_process_group`` read."""
        os.environ.update(
            RANK=str(self.rank),
            LOCAL_RANK=str(self.local_rank),
            WORLD_SIZE=str(self.world_size),
            LOCAL_WORLD_SIZE=str(self.local_world_size),
            MASTER_ADDR=self.master_addr,
            MASTER_PORT=str(self.master_port),
        )
