"""The train and test parts of a dataset, plus what the training loop needs with them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from torch import Tensor
from torch.utils.data import Dataset

from sphere_engine.data.dataset_info import DatasetInfo


@dataclass
class DatasetSplits:
    """Train and test datasets of one run.

    ``train`` and ``test`` are torch Datasets returning ``(x, label)`` with a ``.labels``
    numpy int64 array (labels remapped to 0..C-1 within each split). In-memory datasets
    also have ``get_batch(indices) -> (x, y)`` that indexes tensors directly; the
    training loop (``iter_batches``) uses it when present, else a DataLoader.
    ``augment`` maps a batch (N, *input_shape) to a randomly augmented batch of the
    same shape (two calls give the two views of NT-Xent).
    """

    train: Dataset[Any]
    test: Dataset[Any]
    num_classes_train: int
    num_classes_test: int
    input_shape: tuple[int, ...]
    augment: Callable[[Tensor], Tensor]

    def info(self) -> DatasetInfo:
        return DatasetInfo(self.num_classes_train, self.num_classes_test, self.input_shape)
