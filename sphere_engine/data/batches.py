"""The endless stream of training batches the training loop consumes."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
import torch
from torch import Tensor
from torch.utils.data import DataLoader, Dataset, Subset

from sphere_engine.data.pk_batch_sampler import PKBatchSampler
from sphere_engine.data.shuffled_batch_sampler import ShuffledBatchSampler


class _WithIndex(Dataset[tuple[Tensor, Tensor, int]]):
    """Adds each sample's index to what the wrapped dataset returns; ``raw``: a dataset
    with ``pixels`` gives its uint8 pixels (``arrived`` normalises them on the device)."""

    def __init__(self, dataset: Dataset[Any], raw: bool) -> None:
        self.dataset = dataset
        self.raw = raw and hasattr(dataset, "pixels") and hasattr(dataset, "normalise")

    def __getitem__(self, index: int) -> tuple[Tensor, Tensor, int]:
        if self.raw:
            return self.dataset.pixels(index), torch.tensor(self.dataset.labels[index]), index
        x, y = self.dataset[index]
        return x, y, index

    def arrived(self, x: Tensor, device: torch.device | str | None) -> Tensor:
        """A loader batch's inputs moved to ``device`` (without blocking: the loader pins
        them on CUDA) and, as uint8 pixels, normalised there."""
        if device is not None:
            x = x.to(device, non_blocking=True)
        return self.dataset.normalise(x) if self.raw else x


class _Sharded:
    """A batch sampler whose batches are ``shard`` of the wrapped sampler's."""

    def __init__(
        self, sampler: Iterable[list[int]], shard: Callable[[list[int]], list[int]]
    ) -> None:
        self.sampler, self.shard = sampler, shard

    def __iter__(self) -> Iterator[list[int]]:
        return (self.shard(batch) for batch in self.sampler)


def pixels_travel(device: torch.device | str | None, asked: bool | None) -> bool:
    """Whether image files cross the loader as uint8 pixels, normalised on ``device``
    (``asked``; None: on an accelerator). There the transfer shrinks 4× and the
    normalisation is free; on a CPU it would move the workers' float conversion into the
    training process (0.91× the images/s with 2 workers on 2 cores,
    ``bench/loader_throughput.py``), so items arrive normalised from the workers."""
    if asked is not None:
        return asked
    return device is not None and torch.device(device).type != "cpu"


def batch_sampler(
    labels: Any, batch_size: int, samples_per_class: int, seed: int
) -> PKBatchSampler | ShuffledBatchSampler:
    """P×K sampler for ``samples_per_class`` ≥ 1, plain shuffled batches for 0."""
    if samples_per_class == 0:
        return ShuffledBatchSampler(len(labels), batch_size, seed)
    return PKBatchSampler(labels, batch_size, samples_per_class, seed)


def iter_batches(
    split: Dataset[Any],
    batch_size: int,
    samples_per_class: int,
    seed: int,
    *,
    num_workers: int = 0,
    device: torch.device | str | None = None,
    shard: Callable[[list[int]], list[int]] | None = None,
    pixels_to_device: bool | None = None,
) -> Iterator[tuple[Tensor, Tensor, Tensor]]:
    """Yield ``(x, y, indices)`` forever: inputs (B, *input_shape) float32, labels (B,)
    int64 and the dataset indices (B,) int64 of the samples (for tracking).

    ``split`` needs ``.labels``. With ``get_batch`` (in-memory data) batches are taken
    by indexing tensors directly, after moving the data to ``device`` once; otherwise a
    DataLoader with ``num_workers`` decodes them and each batch is moved to ``device``;
    a dataset with ``pixels(index)`` and ``normalise(batch)`` (``ImageFolderData``) is
    loaded as uint8 pixels and each batch normalised after the move when
    ``pixels_to_device`` (None: when ``device`` is an accelerator; see
    ``pixels_travel``).
    ``shard``: this process's part of each batch (data-parallel training; every process
    draws the same global batches from the same seed).
    """
    sampler: Iterable[list[int]] = batch_sampler(split.labels, batch_size, samples_per_class, seed)
    if shard is not None:
        sampler = _Sharded(sampler, shard)
    if hasattr(split, "get_batch"):
        if device is not None and hasattr(split, "to"):
            split = split.to(device)
        for batch in sampler:
            indices = torch.tensor(batch, dtype=torch.int64)
            x, y = split.get_batch(indices)
            yield x, y, indices
        return
    pin = device is not None and torch.device(device).type == "cuda"
    dataset = _WithIndex(split, pixels_travel(device, pixels_to_device))
    loader = DataLoader(
        dataset,
        batch_sampler=sampler,
        num_workers=num_workers,
        pin_memory=pin,
        persistent_workers=num_workers > 0,
    )
    for x, y, indices in loader:
        if device is not None:
            y = y.to(device, non_blocking=True)
        yield dataset.arrived(x, device), y, indices


def iter_inputs(
    split: Dataset[Any],
    indices: Any,
    batch_size: int,
    *,
    num_workers: int = 0,
    device: torch.device | str | None = None,
    pixels_to_device: bool | None = None,
) -> Iterator[Tensor]:
    """The inputs of ``split`` at ``indices``, in order, ``batch_size`` at a time, on
    ``device``: an evaluation's embedding pass. A data set decoded from files is
    decoded by ``num_workers`` loader processes (as uint8 pixels, normalised on the
    device, as in ``iter_batches``); in-memory data is indexed directly."""
    indices = np.asarray(indices, dtype=np.int64)
    if hasattr(split, "get_batch") or num_workers == 0 or not len(indices):
        for start in range(0, len(indices), batch_size):
            inputs = gather_inputs(split, indices[start : start + batch_size])
            yield inputs.to(device) if device is not None else inputs
        return
    dataset = _WithIndex(split, pixels_travel(device, pixels_to_device))
    pin = device is not None and torch.device(device).type == "cuda"
    rows = Subset(dataset, indices.tolist())  # in the order asked
    loader = DataLoader(rows, batch_size=batch_size, num_workers=num_workers, pin_memory=pin)
    for x, _, _ in loader:
        yield dataset.arrived(x, device)


def gather_inputs(dataset: Any, indices: np.ndarray) -> Tensor:
    """The inputs of ``dataset`` at ``indices`` as one batch tensor (N × input shape),
    decoded here (a few samples: the tracked ones, thumbnails, attacks)."""
    if hasattr(dataset, "get_batch"):
        inputs, _ = dataset.get_batch(torch.as_tensor(np.asarray(indices), dtype=torch.long))
        return inputs
    if not len(indices):  # no tracked samples: an empty batch of the right shape
        return dataset[0][0].new_zeros((0, *dataset[0][0].shape))
    return torch.stack([dataset[int(i)][0] for i in indices])
