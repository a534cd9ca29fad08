"""CIFAR-100 (60 000 × 3×32×32, 100 fine classes) from ``root/cifar-100-python``."""

from __future__ import annotations

from typing import Any

from sphere_engine.data.registry import DATASETS
from sphere_engine.data.torchvision_dataset import TorchvisionDataset
from sphere_engine.tv_compat import torchvision


@DATASETS.register("cifar100")
class CIFAR100(TorchvisionDataset):
    """torchvision's CIFAR100 with the 100 fine labels; flips on."""

    num_classes = 100
    input_shape = (3, 32, 32)
    mean = (0.5071, 0.4865, 0.4409)
    std = (0.2673, 0.2564, 0.2762)
    flip = True
    folder = "cifar-100-python"
    files = ("train", "test", "meta")

    def _torchvision_dataset(self, root: str, train: bool, download: bool) -> Any:
        return torchvision.datasets.CIFAR100(root, train=train, download=download)
