"""Gaussian class clusters around random unit-norm means; needs no files."""

from __future__ import annotations

import numpy as np
import torch

from sphere_engine.config.option_checks import check_option
from sphere_engine.data.dataset_info import DatasetInfo
from sphere_engine.data.dataset_spec import DatasetSpec
from sphere_engine.data.dataset_splits import DatasetSplits
from sphere_engine.data.memory_splits import split_pool
from sphere_engine.data.registry import DATASETS
from sphere_engine.data.splitting import split_class_counts
from sphere_engine.data.vector_augment import VectorAugment


@DATASETS.register("synthetic")
class Synthetic(DatasetSpec):
    """``num_classes`` clusters in ``dim`` dimensions: class means drawn on the unit
    sphere, each sample = its class mean + gaussian noise of std ``noise`` per
    coordinate. Everything is a deterministic function of the seed; every sample is an
    independent draw, so the ``standard`` split's stratified 70/30 test part is a
    separate draw from the same clusters."""

    has_pixel_range = False  # gaussian vectors: no valid input range to attack within

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
        self.num_classes = check_option("num_classes", num_classes, low=2, integer=True)
        self.dim = check_option("dim", dim, low=1, integer=True)
        self.samples_per_class = check_option(
            "samples_per_class", samples_per_class, low=2, integer=True
        )
        self.noise = check_option("noise", noise, low=0)

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
