"""Class-balanced P×K batches: P classes per batch, K samples of each."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np


class PKBatchSampler:
    """Infinite iterator of index lists of length ``batch_size`` = P × K.

    Classes are visited in a reshuffled cycle, so every class appears equally often;
    each class draws its K samples from its own reshuffled queue (every sample is seen
    once before any repeats), with replacement only when the class has fewer than K
    samples. A batch lists its classes one after the other (K indices each). Iterating
    again restarts the same sequence: it is a function of ``seed`` alone.

    ``labels``: (N,) class labels of the dataset the indices point into.
    """

    def __init__(
        self,
        labels: np.ndarray | Sequence[int],
        batch_size: int,
        samples_per_class: int,
        seed: int = 0,
    ) -> None:
        labels = np.asarray(labels)
        if samples_per_class < 1:
            raise ValueError(
                f"samples_per_class: {samples_per_class} must be >= 1 for P×K batches "
                "(use ShuffledBatchSampler for plain batches)"
            )
        if batch_size < 1 or batch_size % samples_per_class:
            raise ValueError(
                f"batch_size: {batch_size} must be a positive multiple of "
                f"samples_per_class ({samples_per_class})"
            )
        self.classes = np.unique(labels)
        self.classes_per_batch = batch_size // samples_per_class
        if self.classes_per_batch > len(self.classes):
            raise ValueError(
                f"batch_size: {batch_size} / samples_per_class {samples_per_class} = "
                f"{self.classes_per_batch} classes per batch, but the data has only "
                f"{len(self.classes)} classes"
            )
        self.batch_size = batch_size
        self.samples_per_class = samples_per_class
        self.seed = seed
        self.members = [np.flatnonzero(labels == c) for c in self.classes]

    def __iter__(self) -> Iterator[list[int]]:
        rng = np.random.default_rng(self.seed)
        k = self.samples_per_class
        queues = [rng.permutation(m) for m in self.members]
        positions = [0] * len(self.members)
        class_cycle: list[int] = []
        while True:
            if len(class_cycle) < 2 * self.classes_per_batch:
                class_cycle += rng.permutation(len(self.classes)).tolist()
            chosen = self._take_distinct(class_cycle)
            batch: list[int] = []
            for c in chosen:
                members = self.members[c]
                if len(members) < k:
                    batch.extend(rng.choice(members, size=k, replace=True).tolist())
                    continue
                if positions[c] + k > len(members):
                    queues[c], positions[c] = rng.permutation(members), 0
                batch.extend(queues[c][positions[c] : positions[c] + k].tolist())
                positions[c] += k
            yield batch

    def _take_distinct(self, class_cycle: list[int]) -> list[int]:
        """Remove and return the first P distinct classes of ``class_cycle``. Each
        permutation in the cycle is consumed exactly once, so classes stay balanced."""
        chosen: list[int] = []
        for position, c in enumerate(class_cycle):
            if c not in chosen:
                chosen.append(c)
                class_cycle[position] = -1
                if len(chosen) == self.classes_per_batch:
                    break
        class_cycle[:] = [c for c in class_cycle if c >= 0]
        return chosen
