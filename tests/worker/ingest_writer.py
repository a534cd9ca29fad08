"""A writer for the ingest tests: an SDK run of STEPS steps, PAUSE seconds apart, with
scalars, embedding diagnostics, two evaluations (snapshot, per-query results) and
images. It prints its run id, then "done". Through SPHERESCOPE_URL when it is set."""

from __future__ import annotations

import sys
import time

import numpy as np
import torch

import spherescope

steps, pause = int(sys.argv[1]), float(sys.argv[2])
torch.manual_seed(0)
rng = np.random.default_rng(0)
ids = np.arange(40) + 100
labels = np.repeat(np.arange(4), 10)
held_out = rng.normal(size=(40, 6)) + 2.0 * np.eye(6)[labels]
with spherescope.init(name="remote writer", config={"lr": 0.1}, tags=["remote"]) as run:
    print(run.id, flush=True)
    run.log_samples(ids, rng.integers(0, 256, (40, 8, 8), dtype=np.uint8))
    for step in range(1, steps + 1):
        run.log_embeddings(torch.randn(16, 4), torch.arange(16) % 4, step=step)
        run.log({"loss/total": 1.0 / step}, step=step)
        if step % (steps // 2) == 0:
            run.evaluate(torch.from_numpy(held_out).float(), labels, step=step, sample_ids=ids)
        time.sleep(pause)
print("done", flush=True)
