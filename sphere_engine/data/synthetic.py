"""Gaussian class clusters around random unit-norm means; needs no files."""

from __future__ import annotations

import numpy as np
import torch

from sphere_engine.data.dataset_info import DatasetInfo
from sphere_engine.data.dataset_registry import DATASETS
from sphere_engine.data.dataset_spec import DatasetSpec
from sphere_engine.data.dataset_splits import DatasetSplits
from sphere_engine.data.memory_splits import split_pool
from sphere_engine.data.splitting import split_class_counts
from sphere_engine.data.vector_augment import VectorAugment


@DATASETS.register("synthetic")
class Synthetic(DatasetSpec):
    """``num_classes`` clusters in ``dim`` dimensions: class means drawn on the unit
    sphere, each sample = its class mean + gaussian noise of std ``noise`` per
    coordinate. Everything is a deterministic function of the seed; every sample is an
    independent draw, so the ``standard`` split's stratified 70/30 test part is a
    separate draw from the same clusters."""

    param_help = {  # noqa: RUF012
        "num_classes": "Number of clusters (classes)",
        "dim": "Dimension of the input vectors",
        "samples_per_class": "Samples drawn per class (before the train/test split)",
        "noise": "Std of each coordinate around the unit-norm class mean",
    }

    def __init__(
        self,
        num_classes: int = 10,
        dim: int = 32,
        samples_per_class: int = 100,
        noise: float = 0.5,
    ) -> None:
        if num_classes < 2:
            raise ValueError(f"data.options.num_classes: {num_classes} must be >= 2")
        if dim < 1:
            raise ValueError(f"data.options.dim: {dim} must be >= 1")
        if samples_per_class < 2:
            raise ValueError(f"data.options.samples_per_class: {samples_per_class} must be >= 2")
        if noise < 0:
            raise ValueError(f"data.options.noise: {noise} must be >= 0")
        self.num_classes = num_classes
        self.dim = dim
        self.samples_per_class = samples_per_class
        self.noise = noise

    def info(self, root: str, split: str) -> DatasetInfo:
        return DatasetInfo(*split_class_counts(self.num_classes, split), (self.dim,))

    def build(self, root: str, split: str, download: bool, seed: int) -> DatasetSplits:
        generator = torch.Generator().manual_seed(seed)
        means = torch.randn(self.num_classes, self.dim, generator=generator)
        means = means / means.norm(dim=1, keepdim=True)
        labels = np.repeat(np.arange(self.num_classes), self.samples_per_class)
        noise = torch.randn(len(labels), self.dim, generator=generator)
        x = means[torch.from_numpy(labels)] + self.noise * noise
        return split_pool(x, labels.astype(np.int64), split, seed, VectorAugment())
