"""Base of the datasets read through torchvision from a local folder."""

from __future__ import annotations

from abc import abstractmethod
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch
from torch import Tensor

from sphere_engine.config.config_error import ConfigError
from sphere_engine.data.dataset_info import DatasetInfo
from sphere_engine.data.dataset_spec import DatasetSpec
from sphere_engine.data.dataset_splits import DatasetSplits
from sphere_engine.data.image_augment import ImageAugment
from sphere_engine.data.memory_splits import memory_splits, split_pool
from sphere_engine.data.splitting import split_class_counts
from sphere_engine.data.tensor_data import TensorData


class TorchvisionDataset(DatasetSpec):
    """Reads a torchvision dataset's raw tensors (``ds.data``, ``ds.targets``) into
    memory as uint8 (N, C, H, W); batches are normalised with ``mean``/``std`` in
    ``TensorData.get_batch``. Downloads only with ``download=True``; missing files raise
    a ``ValueError`` naming the folder and the files expected there.

    ``standard`` uses the dataset's own train/test files; ``class_disjoint`` pools both
    and splits the classes in halves (all samples of a class go to one side).
    """

    num_classes: ClassVar[int]
    input_shape: ClassVar[tuple[int, int, int]]
    mean: ClassVar[tuple[float, ...]]
    std: ClassVar[tuple[float, ...]]
    flip: ClassVar[bool]  # horizontal flips keep the class (not for digits/letters)
    folder: ClassVar[str]  # sub-folder of root holding the files
    files: ClassVar[tuple[str, ...]]

    @abstractmethod
    def _torchvision_dataset(self, root: str, train: bool, download: bool) -> Any:
        """The torchvision dataset object for one of its own splits."""

    def _raw_tensors(self, dataset: Any) -> tuple[Tensor, np.ndarray]:
        """uint8 images (N, C, H, W) and int64 labels (N,) of a torchvision dataset."""
        data = torch.as_tensor(dataset.data)
        # Grayscale comes as (N, H, W), colour as (N, H, W, C).
        data = data[:, None] if data.dim() == 3 else data.permute(0, 3, 1, 2)
        return data.contiguous(), np.asarray(dataset.targets, dtype=np.int64)

    def expected_paths(self, root: str) -> list[Path]:
        return [Path(root) / self.folder / name for name in self.files]

    def _missing_files_error(self, root: str, reason: str) -> ValueError:
        name = type(self).__name__
        where = Path(root) / self.folder
        files = ", ".join(str(path) for path in self.expected_paths(root))
        found = _found(root, self.folder)
        return ConfigError(
            "data.root",
            f"{name} files not found in {str(where)!r} ({reason}){found}; "
            f"expected {files}. Place them there or set data.download = true (needs network).",
        )

    def check_files(self, root: str, download: bool) -> None:
        if not root:
            raise self._missing_files_error(root, "data.root is empty")
        if download:
            return  # torchvision creates the folder and fetches what is missing
        if not Path(root).is_dir():
            raise self._missing_files_error(root, f"{root!r} does not exist, download is off")
        missing = [path for path in self.expected_paths(root) if not path.is_file()]
        if missing:
            raise self._missing_files_error(root, f"{len(missing)} missing, download is off")

    def _load(self, root: str, train: bool, download: bool) -> tuple[Tensor, np.ndarray]:
        self.check_files(root, download)
        try:
            dataset = self._torchvision_dataset(root, train, download)
        except (OSError, RuntimeError) as error:  # offline download, corrupt files
            raise self._missing_files_error(root, str(error)) from error
        return self._raw_tensors(dataset)

    def info(self, root: str, split: str) -> DatasetInfo:
        return DatasetInfo(*split_class_counts(self.num_classes, split), self.input_shape)

    def build(self, root: str, split: str, download: bool, seed: int) -> DatasetSplits:
        train_x, train_labels = self._load(root, True, download)
        test_x, test_labels = self._load(root, False, download)
        padding = self.input_shape[-1] // 8
        augment = ImageAugment(padding=padding, flip=self.flip, noise_std=0.05)
        if split == "standard":
            return memory_splits(
                TensorData(train_x, train_labels, self.mean, self.std),
                TensorData(test_x, test_labels, self.mean, self.std),
                augment,
            )
        x = torch.cat([train_x, test_x])
        labels = np.concatenate([train_labels, test_labels])
        return split_pool(x, labels, split, seed, augment, self.mean, self.std)


def _found(root: str, own_folder: str) -> str:
    """``"; it looks like the cub200 layout"`` when ``root`` holds another dataset's
    official layout (e.g. the CUB folder given to cifar10), else ""."""
    from sphere_engine.data.benchmarks.layouts import MARKERS, detect_layout

    found = detect_layout(Path(root)) if root and Path(root).is_dir() else None
    if found not in MARKERS or own_folder in MARKERS[found]:
        return ""
    return f"; it looks like the {found} layout"
