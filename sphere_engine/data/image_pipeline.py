"""The DML papers' image pipeline: per-image transforms decoded in the loader workers.

Train: random-resized crop to ``size`` and a horizontal flip; test: resize the short
side to ``size · 256/224`` and centre-crop ``size``; both ImageNet-normalised.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence

import torch

from sphere_engine.data.image_folder_data import IMAGENET_MEAN, IMAGENET_STD
from sphere_engine.tv_compat import torchvision  # noqa: F401 - loads torchvision for v2

v2 = importlib.import_module("torchvision.transforms.v2")

#: The test resize before the centre crop, as in the ImageNet evaluation (256 → 224).
RESIZE_RATIO = 256 / 224


def _normalise(mean: Sequence[float], std: Sequence[float]) -> list[Callable]:
    return [v2.ToDtype(torch.float32, scale=True), v2.Normalize(list(mean), list(std))]


def train_transform(
    size: int, mean: Sequence[float] = IMAGENET_MEAN, std: Sequence[float] = IMAGENET_STD
) -> Callable:
    return v2.Compose(
        [
            v2.ToImage(),
            v2.RandomResizedCrop(size, antialias=True),
            v2.RandomHorizontalFlip(),
            *_normalise(mean, std),
        ]
    )


def test_transform(
    size: int, mean: Sequence[float] = IMAGENET_MEAN, std: Sequence[float] = IMAGENET_STD
) -> Callable:
    return v2.Compose(
        [
            v2.ToImage(),
            v2.Resize(round(size * RESIZE_RATIO), antialias=True),
            v2.CenterCrop(size),
            *_normalise(mean, std),
        ]
    )
