"""Plain shuffled batches (no class balancing), used when samples_per_class is 0."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np


class ShuffledBatchSampler:
    """Infinite iterator of index lists of length ``batch_size`` drawn from a reshuffled
    permutation of range(num_samples) per epoch; batches run across epoch boundaries so
    all are full. Iterating again restarts the same sequence (a function of ``seed``)."""

    def __init__(self, num_samples: int, batch_size: int, seed: int = 0) -> None:
        if num_samples < 1:
            raise ValueError(f"num_samples: {num_samples} must be >= 1")
        if batch_size < 1:
            raise ValueError(f"batch_size: {batch_size} must be >= 1")
        self.num_samples = num_samples
        self.batch_size = batch_size
        self.seed = seed

    def __iter__(self) -> Iterator[list[int]]:
        rng = np.random.default_rng(self.seed)
        pending = np.empty(0, dtype=np.int64)
        while True:
            while len(pending) < self.batch_size:
                pending = np.concatenate([pending, rng.permutation(self.num_samples)])
            batch, pending = pending[: self.batch_size], pending[self.batch_size :]
            yield batch.tolist()
