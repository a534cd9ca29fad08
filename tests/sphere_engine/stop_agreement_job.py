"""Run by torchrun (2 ranks) from test_data_parallel.py: rank 1 asks to stop at call 3;
each rank writes, per way of reading the vote, the calls at which it was told to stop."""

import json
import sys
from pathlib import Path

import torch
import torch.distributed as dist

from sphere_engine.parallel import DataParallel, StopAgreement

dist.init_process_group("gloo")
parallel = DataParallel.from_process_group()
told: dict[str, list[int]] = {}
for read_later in (False, True):
    agreement = StopAgreement(parallel, torch.device("cpu"), read_later=read_later)
    told[str(read_later)] = [
        call for call in range(1, 6) if agreement(parallel.rank == 1 and call == 3)
    ]
Path(sys.argv[1], f"rank{parallel.rank}.json").write_text(json.dumps(told))
dist.destroy_process_group()
