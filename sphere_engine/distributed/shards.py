"""The evaluation set from its shards: ``DistributedSampler``'s padding dropped.

``DistributedSampler`` gives rank r the indices r, r + W, r + 2W, ... of its (possibly
shuffled) index list, padded at the end with the first indices again so that every
rank gets ceil(N / W). Gathered in rank order, the shards are interleaved back into
sampler order and cut at the data set's size; with ``sample_ids`` instead, each id is
kept once (its first occurrence), ordered by id, so the result does not depend on the
number of ranks. Uneven shards with no padding (a user's own split) are kept whole.
Accelerate (the Hugging Face Trainer) deals whole batches instead of single samples
(rank r gets batches r, r + W, ...) and completes the last ones from the start: the
same rule with ``block`` rows dealt at a time.
"""

from __future__ import annotations

import numpy as np
import torch

from sphere_engine.distributed.context import DistributedContext
from sphere_engine.distributed.gather import GatheredBatch, gather_batch

__all__ = ["gather_union", "union_rows"]


def union_rows(
    sizes: list[int],
    *,
    sample_ids: np.ndarray | None = None,
    dataset_size: int | None = None,
    block: int = 1,
) -> np.ndarray:
    """Row indices into the rank-order concatenation of shards of ``sizes`` rows that
    give each sample once: by ``sample_ids`` (sorted by id), else by ``dataset_size``
    (sampler order, padding dropped; ``block``: rows dealt to a rank at a time), else
    every row in rank order."""
    total = sum(sizes)
    if sample_ids is not None:
        ids = np.asarray(sample_ids).reshape(-1)
        if ids.shape[0] != total:
            raise ValueError(
                f"sample_ids must have one entry per row ({total}), got {ids.shape[0]}"
            )
        _, first = np.unique(ids, return_index=True)
        return first.astype(np.int64)
    if dataset_size is None:
        return np.arange(total, dtype=np.int64)
    if isinstance(dataset_size, bool) or not isinstance(dataset_size, (int, np.integer)):
        raise ValueError(f"dataset_size must be an integer, got {dataset_size!r}")
    if isinstance(block, bool) or not isinstance(block, int) or block < 1:
        raise ValueError(f"block must be an integer >= 1, got {block!r}")
    world = len(sizes)
    extra = total - int(dataset_size)
    if dataset_size < 1 or extra >= world * block:
        raise ValueError(
            f"dataset_size={dataset_size} does not fit {total} rows from {world} ranks "
            f"dealt {block} at a time (padding is under {world * block} rows); "
            "pass sample_ids instead"
        )
    # sampler position of row i of rank r: its block's turn, then its place in the block
    positions = np.concatenate(
        [
            (rows // block) * world * block + rank * block + rows % block
            for rank, rows in ((r, np.arange(size, dtype=np.int64)) for r, size in enumerate(sizes))
        ]
    )
    order = np.argsort(positions, kind="stable")
    return order[: min(total, int(dataset_size))]


def gather_union(
    embeddings: torch.Tensor,
    labels: torch.Tensor,
    ctx: DistributedContext,
    *,
    sample_ids: torch.Tensor | None = None,
    dataset_size: int | None = None,
    block: int = 1,
) -> GatheredBatch:
    """All ranks' evaluation shards as one set, each sample once (see ``union_rows``);
    collective, the result on every rank."""
    batch = gather_batch(embeddings, labels, ctx, sample_ids)
    if sample_ids is not None and batch.sample_ids is None:
        raise ValueError("sample_ids: every rank must pass them, or none")
    ids = None if batch.sample_ids is None else batch.sample_ids.cpu().numpy()
    rows = union_rows(batch.sizes, sample_ids=ids, dataset_size=dataset_size, block=block)
    index = torch.as_tensor(rows, device=batch.embeddings.device)
    return GatheredBatch(
        batch.embeddings[index],
        batch.labels[index],
        None if batch.sample_ids is None else batch.sample_ids[index],
        batch.sizes,
    )
