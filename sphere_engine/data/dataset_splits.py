"""The train and test parts of a dataset, plus what the training loop needs with them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
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

    ``pixel_range`` declares the valid input range for adversarial attacks: model inputs
    are ``(pixels - mean) / std`` with pixels in [0, 1] (``PixelRange``); None when the
    dataset has no such range (synthetic vectors), and then no robustness evaluation.
    ``image_shape``: the (C, H, W) a sample's pixels are drawn as when its input is not
    already an image (digits as 64-vectors: (1, 8, 8)); the explorer's thumbnails use it.

    ``validation``: with ``data.folds`` (``sphere_engine.data.folds.fold_splits``), the
    fold's validation classes, taken out of the training set; the periodic evaluation
    embeds it instead of ``test`` (``evaluated``). None without folds.
    """

    train: Dataset[Any]
    test: Dataset[Any]
    num_classes_train: int
    num_classes_test: int
    input_shape: tuple[int, ...]
    augment: Callable[[Tensor], Tensor]
    pixel_range: PixelRange | None = None
    image_shape: tuple[int, ...] | None = None
    validation: Dataset[Any] | None = None

    @property
    def evaluated(self) -> Dataset[Any]:
        """What the periodic evaluation embeds: the validation classes, else the test split."""
        return self.test if self.validation is None else self.validation

    def info(self) -> DatasetInfo:
        return DatasetInfo(self.num_classes_train, self.num_classes_test, self.input_shape)


@dataclass(frozen=True)
class PixelRange:
    """Model inputs are ``(pixels - mean) / std`` with pixels in [0, 1]; ``mean`` and
    ``std`` broadcast over one sample (per channel (C, 1, 1), per feature, or scalar)."""

    mean: Tensor
    std: Tensor

    @classmethod
    def of(cls, mean: Any = 0.0, std: Any = 1.0, channels: bool = True) -> PixelRange:
        """From per-channel sequences (shaped (C, 1, 1) when ``channels``) or tensors."""
        mean_t = torch.as_tensor(mean, dtype=torch.float32)
        std_t = torch.as_tensor(std, dtype=torch.float32)
        if channels and mean_t.dim() == 1:
            mean_t, std_t = mean_t.reshape(-1, 1, 1), std_t.reshape(-1, 1, 1)
        return cls(mean_t, std_t)

    def to_pixels(self, inputs: Tensor) -> Tensor:
        """Model inputs (N, ...) → pixels in [0, 1] (clamped against rounding)."""
        mean, std = self.mean.to(inputs.device), self.std.to(inputs.device)
        return (inputs * std + mean).clamp_(0.0, 1.0)

    def to_inputs(self, pixels: Tensor) -> Tensor:
        """Pixels in [0, 1] → model inputs (differentiable)."""
        return (pixels - self.mean.to(pixels.device)) / self.std.to(pixels.device)
