"""Run by torchrun from test_distributed.py: one short SDK run on every rank, then exit.

The exit is what is tested. ``python exit_job.py OUT``; each rank writes
``OUT/rank<r>.json`` from an exit hook that runs after SphereScope's own (``atexit``
runs the last registered first): whether the default process group the SDK initialised
was still there, and which of the run's side-channel threads were still alive.
"""

import atexit
import json
import os
import sys
import threading
from pathlib import Path

import torch.distributed as dist

import spherescope

out, rank = Path(sys.argv[1]), int(os.environ["RANK"])


def record_exit() -> None:
    threads = [t.name for t in threading.enumerate() if t.name == "spherescope-job"]
    state = {"group_initialised": dist.is_initialized(), "job_threads": threads}
    (out / f"rank{rank}.json").write_text(json.dumps(state))


atexit.register(record_exit)  # before init: runs after the SDK's exit hooks
with spherescope.init(name="exit") as run:
    # a collective just before the exit: its gloo work is released as the process ends
    run.log({"loss/total": 1.0 + rank}, step=1, reduce="mean")
