"""The DML papers' image pipeline: per-image transforms decoded in the loader workers.

Train: random-resized crop to ``size`` (its area a fraction in ``scale`` of the image,
``data.crop_scale``) and a horizontal flip; test: resize the short side to
``size · 256/224`` and centre-crop ``size``. With ``resize`` (``data.resize``) both
first resize the short side to it, as MLRC does (256, then 227-px crops). Both give
uint8 pixels: the ImageNet normalisation is ``ImageFolderData.normalise``, run on each
batch's device.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from sphere_engine.config.crop_scale import DEFAULT_CROP_SCALE
from sphere_engine.tv_compat import torchvision  # noqa: F401 - loads torchvision for v2

v2 = importlib.import_module("torchvision.transforms.v2")

#: The test resize before the centre crop, as in the ImageNet evaluation (256 → 224).
RESIZE_RATIO = 256 / 224


def train_transform(
    size: int, scale: tuple[float, float] = DEFAULT_CROP_SCALE, resize: int = 0
) -> Callable:
    first = [v2.Resize(resize, antialias=True)] if resize else []
    crop = v2.RandomResizedCrop(size, scale=tuple(scale), antialias=True)
    return v2.Compose([v2.ToImage(), *first, crop, v2.RandomHorizontalFlip()])


def test_transform(size: int, resize: int = 0) -> Callable:
    side = resize or round(size * RESIZE_RATIO)
    return v2.Compose([v2.ToImage(), v2.Resize(side, antialias=True), v2.CenterCrop(size)])
