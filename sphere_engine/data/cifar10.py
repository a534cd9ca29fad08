"""CIFAR-10 (60 000 × 3×32×32, 10 classes) from ``root/cifar-10-batches-py``."""

from __future__ import annotations

from typing import Any

from sphere_engine.data.registry import DATASETS
from sphere_engine.data.torchvision_dataset import TorchvisionDataset
from sphere_engine.tv_compat import torchvision


@DATASETS.register("cifar10")
class CIFAR10(TorchvisionDataset):
    """torchvision's CIFAR10 (python pickles); flips on."""

    num_classes = 10
    input_shape = (3, 32, 32)
    mean = (0.4914, 0.4822, 0.4465)
    std = (0.2470, 0.2435, 0.2616)
    flip = True
    folder = "cifar-10-batches-py"
    files = (
        *(f"data_batch_{i}" for i in range(1, 6)),
        "test_batch",
        "batches.meta",
    )

    def _torchvision_dataset(self, root: str, train: bool, download: bool) -> Any:
        return torchvision.datasets.CIFAR10(root, train=train, download=download)
