"""One record answers "which rank am I": the SDK's context, the loop's DataParallel and
a SLURM task's ranks are each a ``JobRank``, so their flags cannot disagree."""

from __future__ import annotations

import pytest

from sphere_engine.distributed import DistributedContext, single_process
from sphere_engine.job_rank import JobRank
from sphere_engine.parallel import SINGLE_PROCESS, DataParallel
from worker.slurm.ranks import SlurmRanks

RECORDS = [DistributedContext, DataParallel, SlurmRanks]


@pytest.mark.parametrize("record", RECORDS)
def test_every_rank_record_answers_from_the_one_declaration(record: type[JobRank]) -> None:
    assert issubclass(record, JobRank)
    follower = record(rank=1, world_size=2, local_rank=1)
    assert (follower.is_distributed, follower.is_main) == (True, False)
    lead = record(rank=0, world_size=2)
    assert (lead.is_distributed, lead.is_main) == (True, True)
    alone = record()
    assert (alone.rank, alone.world_size, alone.local_rank) == (0, 1, 0)
    assert (alone.is_distributed, alone.is_main) == (False, True)


def test_the_loops_collectives_see_the_same_place_in_the_job() -> None:
    parallel = DataParallel(rank=2, world_size=4, local_rank=0)
    context = parallel.context
    assert (context.rank, context.world_size, context.local_rank) == (2, 4, 0)
    assert not SINGLE_PROCESS.is_distributed and not single_process().is_distributed
