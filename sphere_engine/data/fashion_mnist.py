"""Fashion-MNIST (70 000 × 1×28×28, 10 classes) from ``root/FashionMNIST/raw``."""

from __future__ import annotations

from typing import Any

from sphere_engine.data.registry import DATASETS
from sphere_engine.data.torchvision_dataset import TorchvisionDataset
from sphere_engine.tv_compat import torchvision


@DATASETS.register("fashion_mnist")
class FashionMNIST(TorchvisionDataset):
    """torchvision's FashionMNIST; clothes stay clothes when mirrored, so flips are on."""

    num_classes = 10
    input_shape = (1, 28, 28)
    mean = (0.2860,)
    std = (0.3530,)
    flip = True
    folder = "FashionMNIST/raw"
    files = (
        "train-images-idx3-ubyte",
        "train-labels-idx1-ubyte",
        "t10k-images-idx3-ubyte",
        "t10k-labels-idx1-ubyte",
    )

    def _torchvision_dataset(self, root: str, train: bool, download: bool) -> Any:
        return torchvision.datasets.FashionMNIST(root, train=train, download=download)
