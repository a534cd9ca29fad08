"""Run by torchrun (2 ranks) from test_gather.py: each rank writes what it received."""

import json
import sys
from pathlib import Path

import torch
import torch.distributed as dist
from torch.utils.data import DistributedSampler

from sphere_engine.distributed import (
    broadcast_object,
    detect,
    gather_batch,
    gather_rows,
    gather_union,
    reduce_values,
)

assert not dist.is_initialized()
ctx = detect()  # from torchrun's environment: initialises the default group
rank = ctx.rank
rows = 2 + rank  # uneven shards
embeddings = torch.arange(rows * 3, dtype=torch.float32).reshape(rows, 3) + 100 * rank
labels = torch.full((rows,), 2**40 + rank)  # beyond float32's exact integers
batch = gather_batch(embeddings, labels, ctx, sample_ids=torch.arange(rows) + 10 * rank)
gradients = gather_rows(-embeddings, ctx, batch.sizes)
values = {"loss": 1.0 + rank, "acc": 10.0 * (rank + 1)}
dataset = list(range(7))
shard = torch.tensor(list(DistributedSampler(dataset, num_replicas=2, rank=rank, shuffle=False)))
union = gather_union(shard[:, None].float(), shard, ctx, dataset_size=7)
by_id = gather_union(shard[:, None].float(), shard, ctx, sample_ids=shard)
result = {
    "context": [ctx.rank, ctx.world_size, ctx.local_rank, ctx.source, ctx.backend],
    "sizes": batch.sizes,
    "embeddings": batch.embeddings.tolist(),
    "labels": batch.labels.tolist(),
    "ids": batch.sample_ids.tolist(),
    "gradients": gradients.tolist(),
    "mean": reduce_values(values, "mean", ctx),
    "sum": reduce_values(values, "sum", ctx),
    "max": reduce_values(values, "max", ctx),
    "run_id": broadcast_object("run-from-0" if rank == 0 else None, ctx),
    "union": union.labels.tolist(),
    "union_rows": union.embeddings[:, 0].tolist(),
    "by_id": by_id.labels.tolist(),
    # the default group is not held (a reference past destroy_process_group aborts the
    # process at exit under torch 2.13's gloo)
    "holds_group": ctx.group is not None,
}
Path(sys.argv[1], f"rank{rank}.json").write_text(json.dumps(result))
dist.destroy_process_group()
