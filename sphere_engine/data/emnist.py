"""EMNIST balanced (131 600 × 1×28×28, 47 classes) from ``root/EMNIST/raw``."""

from __future__ import annotations

from typing import Any

import numpy as np
from torch import Tensor

from sphere_engine.data.registry import DATASETS
from sphere_engine.data.torchvision_dataset import TorchvisionDataset
from sphere_engine.tv_compat import torchvision


@DATASETS.register("emnist")
class EMNIST(TorchvisionDataset):
    """torchvision's EMNIST, ``balanced`` split (digits and letters, 47 classes). The raw
    files store each image transposed; we transpose back so glyphs read upright. No
    horizontal flips (letters)."""

    num_classes = 47
    input_shape = (1, 28, 28)
    mean = (0.1751,)
    std = (0.3332,)
    flip = False
    folder = "EMNIST/raw"
    files = (
        "emnist-balanced-train-images-idx3-ubyte",
        "emnist-balanced-train-labels-idx1-ubyte",
        "emnist-balanced-test-images-idx3-ubyte",
        "emnist-balanced-test-labels-idx1-ubyte",
    )

    def _torchvision_dataset(self, root: str, train: bool, download: bool) -> Any:
        return torchvision.datasets.EMNIST(root, split="balanced", train=train, download=download)

    def _raw_tensors(self, dataset: Any) -> tuple[Tensor, np.ndarray]:
        images, labels = super()._raw_tensors(dataset)
        return images.transpose(-1, -2).contiguous(), labels
