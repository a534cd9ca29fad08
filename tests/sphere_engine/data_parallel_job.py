"""Run by torchrun (2 ranks) from test_data_parallel.py; each rank writes what it saw:

- ``told``: per way of reading the vote, the calls of ``StopAgreement`` at which it was
  told to stop (rank 1 asks at call 3);
- ``global_batch``: the job's batch gathered by ``DataParallel.global_batch``, with the
  exchange of batch sizes made to fail (equal shards need none);
- ``refused``: the error of a gather given sizes that do not match the rank's rows.
"""

import json
import sys
from pathlib import Path

import torch
import torch.distributed as dist

import sphere_engine.distributed.gather as gather
from sphere_engine.parallel import DataParallel, StopAgreement

dist.init_process_group("gloo")
parallel = DataParallel.from_process_group()
rank = parallel.rank
result: dict = {"told": {}}
for read_later in (False, True):
    agreement = StopAgreement(parallel, torch.device("cpu"), read_later=read_later)
    result["told"][str(read_later)] = [
        call for call in range(1, 6) if agreement(rank == 1 and call == 3)
    ]


def no_exchange(rows: int, ctx: object) -> list[int]:
    raise AssertionError("the batch sizes were exchanged")


gather.gather_sizes = no_exchange
embeddings = torch.full((2, 3), float(rank))
embeddings_all, labels_all, gradients_all = parallel.global_batch(
    embeddings, torch.tensor([rank, rank]), -embeddings
)
result["global_batch"] = [embeddings_all.tolist(), labels_all.tolist(), gradients_all.tolist()]
try:
    gather.gather_batch(embeddings, torch.tensor([0, 0]), parallel.context, sizes=[3, 3])
except gather.GatherError as error:
    result["refused"] = str(error)
Path(sys.argv[1], f"rank{rank}.json").write_text(json.dumps(result))
dist.destroy_process_group()
