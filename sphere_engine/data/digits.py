"""scikit-learn's bundled 8×8 digits (1797 samples, 10 classes); needs no files."""

from __future__ import annotations

import numpy as np
import torch
from sklearn.datasets import load_digits

from sphere_engine.data.dataset_info import DatasetInfo
from sphere_engine.data.dataset_spec import DatasetSpec
from sphere_engine.data.dataset_splits import DatasetSplits, PixelRange
from sphere_engine.data.image_augment import ImageAugment
from sphere_engine.data.memory_splits import split_pool
from sphere_engine.data.registry import DATASETS
from sphere_engine.data.splitting import split_class_counts, split_indices
from sphere_engine.data.vector_augment import VectorAugment

NUM_CLASSES = 10


@DATASETS.register("digits")
class Digits(DatasetSpec):
    """Pixel values 0..16 scaled to [0, 1], or standardised per pixel with the training
    split's statistics. Vectors (64,) by default, images (1, 8, 8) with ``as_image``.
    ``standard`` split: stratified 70/30 by seed. No horizontal flips (digits)."""

    param_help = {  # noqa: RUF012
        "as_image": "Give (1, 8, 8) images instead of (64,) vectors (for conv backbones)",
        "standardize": "Standardise each pixel with the training split's mean and std "
        "instead of scaling to [0, 1]",
    }

    def __init__(self, as_image: bool = False, standardize: bool = False) -> None:
        self.as_image = as_image
        self.standardize = standardize

    def _input_shape(self) -> tuple[int, ...]:
        return (1, 8, 8) if self.as_image else (64,)

    def info(self, root: str, split: str) -> DatasetInfo:
        return DatasetInfo(*split_class_counts(NUM_CLASSES, split), self._input_shape())

    def build(self, root: str, split: str, download: bool, seed: int) -> DatasetSplits:
        bunch = load_digits()
        x = torch.from_numpy(bunch.data.astype(np.float32) / 16.0)
        labels = bunch.target.astype(np.int64)
        pixel_range = PixelRange.of(0.0, 1.0)  # pixels 0..16 scaled to [0, 1]
        if self.standardize:
            train_idx, _ = split_indices(labels, split, seed)
            train_x = x[torch.from_numpy(train_idx)]
            mean = train_x.mean(0)
            # Border pixels are constant in training: keep them at zero, don't divide by 0.
            std = train_x.std(0).clamp_min(1e-3)
            x = (x - mean) / std
            shape = self._input_shape()  # per-pixel statistics, one sample's shape
            pixel_range = PixelRange.of(mean.reshape(shape), std.reshape(shape), channels=False)
        if not self.as_image:
            splits = split_pool(x, labels, split, seed, VectorAugment())
            splits.image_shape = (1, 8, 8)  # the vectors are 8×8 images, row by row
        else:
            x = x.reshape(-1, 1, 8, 8)
            augment = ImageAugment(padding=1, flip=False, noise_std=0.05)
            splits = split_pool(x, labels, split, seed, augment)
        splits.pixel_range = pixel_range
        return splits
