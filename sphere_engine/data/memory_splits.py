"""Build ``DatasetSplits`` from tensors held in memory."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import Tensor

from sphere_engine.data.dataset_splits import DatasetSplits, PixelRange
from sphere_engine.data.splitting import split_indices
from sphere_engine.data.tensor_data import TensorData


def memory_splits(
    train: TensorData, test: TensorData, augment: Callable[[Tensor], Tensor]
) -> DatasetSplits:
    """Wrap two in-memory splits; the input shape is that of one sample. uint8 images
    (scaled to [0, 1], then normalised) declare their pixel range."""
    pixel_range = None
    if train.x.dtype == torch.uint8:
        pixel_range = PixelRange(
            torch.zeros(()) if train.mean is None else train.mean[0].cpu(),
            torch.ones(()) if train.std is None else train.std[0].cpu(),
        )
    return DatasetSplits(
        train=train,
        test=test,
        num_classes_train=train.num_classes,
        num_classes_test=test.num_classes,
        input_shape=tuple(train.x.shape[1:]),
        augment=augment,
        pixel_range=pixel_range,
    )


def split_pool(
    x: Tensor,
    labels: np.ndarray,
    split: str,
    seed: int,
    augment: Callable[[Tensor], Tensor],
    mean: Sequence[float] | None = None,
    std: Sequence[float] | None = None,
) -> DatasetSplits:
    """Split one pool of samples ``x`` (N, *input_shape) with ``labels`` (N,) by
    ``split`` (see ``split_indices``) into in-memory train and test sets."""
    train_idx, test_idx = split_indices(labels, split, seed)
    train_rows, test_rows = torch.from_numpy(train_idx), torch.from_numpy(test_idx)
    return memory_splits(
        TensorData(x[train_rows], labels[train_idx], mean, std),
        TensorData(x[test_rows], labels[test_idx], mean, std),
        augment,
    )
