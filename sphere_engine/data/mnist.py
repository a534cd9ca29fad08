"""MNIST handwritten digits (70 000 × 1×28×28, 10 classes) from ``root/MNIST/raw``."""

from __future__ import annotations

from typing import Any

from sphere_engine.data.registry import DATASETS
from sphere_engine.data.torchvision_dataset import TorchvisionDataset
from sphere_engine.tv_compat import torchvision


@DATASETS.register("mnist")
class MNIST(TorchvisionDataset):
    """torchvision's MNIST; no horizontal flips in augmentation (digits)."""

    num_classes = 10
    input_shape = (1, 28, 28)
    mean = (0.1307,)
    std = (0.3081,)
    flip = False
    folder = "MNIST/raw"
    files = (
        "train-images-idx3-ubyte",
        "train-labels-idx1-ubyte",
        "t10k-images-idx3-ubyte",
        "t10k-labels-idx1-ubyte",
    )

    def _torchvision_dataset(self, root: str, train: bool, download: bool) -> Any:
        return torchvision.datasets.MNIST(root, train=train, download=download)
