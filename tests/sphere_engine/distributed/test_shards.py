"""Rebuilding an evaluation set from DistributedSampler shards (no processes needed)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.utils.data import DistributedSampler

from sphere_engine.distributed import union_rows


def _shards(size: int, world: int, shuffle: bool) -> list[list[int]]:
    data = list(range(size))
    shards = []
    for rank in range(world):
        sampler = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=shuffle, seed=3)
        shards.append(list(sampler))
    return shards


@pytest.mark.parametrize(("size", "world"), [(7, 2), (10, 3), (9, 3), (5, 4)])
def test_dataset_size_interleaves_the_shards_back_and_drops_the_padding(
    size: int, world: int
) -> None:
    shards = _shards(size, world, shuffle=False)
    flat = np.concatenate([np.asarray(s) for s in shards])
    rows = union_rows([len(s) for s in shards], dataset_size=size)
    assert flat[rows].tolist() == list(range(size))


def test_shuffled_shards_give_each_sample_once_in_sampler_order() -> None:
    shards = _shards(11, 3, shuffle=True)
    flat = np.concatenate([np.asarray(s) for s in shards])
    rows = union_rows([len(s) for s in shards], dataset_size=11)
    assert sorted(flat[rows].tolist()) == list(range(11))
    order = list(DistributedSampler(list(range(11)), num_replicas=1, rank=0, seed=3))
    assert flat[rows].tolist() == order  # the sampler's own permutation, unpadded


def test_sample_ids_keep_each_id_once_sorted_by_id() -> None:
    ids = np.array([4, 0, 2, 1, 3, 4])
    rows = union_rows([3, 3], sample_ids=ids)
    assert ids[rows].tolist() == [0, 1, 2, 3, 4]


def test_uneven_shards_without_padding_are_kept_whole() -> None:
    assert union_rows([3, 1, 2]).tolist() == [0, 1, 2, 3, 4, 5]
    assert sorted(union_rows([3, 2], dataset_size=5).tolist()) == [0, 1, 2, 3, 4]


def test_a_dataset_size_that_cannot_be_padding_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="dataset_size=3 does not fit 8 rows from 2 ranks"):
        union_rows([4, 4], dataset_size=3)
    with pytest.raises(ValueError, match="sample_ids must have one entry per row"):
        union_rows([2, 2], sample_ids=torch.arange(3).numpy())


@pytest.mark.parametrize(("size", "world", "batch"), [(7, 2, 4), (5, 2, 4), (10, 3, 2), (8, 2, 4)])
def test_batches_dealt_whole_are_rebuilt_with_block(size: int, world: int, batch: int) -> None:
    # Accelerate: rank r gets batches r, r + W, ...; the last ones completed from the start
    order = list(range(size))
    batches_needed = -(-size // (batch * world)) * world
    padded = (order * (batches_needed * batch // size + 1))[: batches_needed * batch]
    batches = [padded[i * batch : (i + 1) * batch] for i in range(batches_needed)]
    shards = [[i for b in batches[rank::world] for i in b] for rank in range(world)]
    flat = np.concatenate([np.asarray(s) for s in shards])
    rows = union_rows([len(s) for s in shards], dataset_size=size, block=batch)
    assert flat[rows].tolist() == order
