"""Any class-per-folder image tree (CUB-200-2011, Cars-196, your own photos)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sphere_engine.config.config_error import ConfigError
from sphere_engine.config.option_checks import check_option
from sphere_engine.data.dataset_info import DatasetInfo
from sphere_engine.data.dataset_spec import DatasetSpec
from sphere_engine.data.dataset_splits import DatasetSplits, PixelRange
from sphere_engine.data.image_augment import ImageAugment
from sphere_engine.data.image_folder_data import IMAGENET_MEAN, IMAGENET_STD, ImageFolderData
from sphere_engine.data.registry import DATASETS
from sphere_engine.data.splitting import class_disjoint_counts, split_indices

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def _class_dirs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))


def _scan(folder: Path, class_ids: dict[str, int]) -> tuple[list[Path], list[int]]:
    """Image paths under ``folder/<class>/`` (sorted) with their class ids."""
    paths, labels = [], []
    for class_dir in _class_dirs(folder):
        for path in sorted(class_dir.iterdir()):
            if path.is_file() and path.suffix.lower() in IMAGE_SUFFIXES:
                paths.append(path)
                labels.append(class_ids[class_dir.name])
    return paths, labels


@DATASETS.register("image_folder")
class ImageFolder(DatasetSpec):
    """``root`` holds one sub-folder per class, or ``train/`` and ``test/`` folders that
    each hold class sub-folders. Classes are ordered by folder name (CUB's
    ``001.Black_footed_Albatross`` order is the class id order).

    ``class_disjoint``: the first half of the classes (all their images, from both
    ``train/`` and ``test/`` if present) trains, the rest tests. ``standard``: the
    ``train/``/``test/`` folders, or without them a stratified 70/30 split by seed.
    Images are decoded on access (``ImageFolderData``), resized to ``image_size``.
    """

    param_help = {  # noqa: RUF012
        "image_size": "Images are resized to image_size × image_size pixels",
    }

    def __init__(self, image_size: int = 64) -> None:
        self.image_size = check_option("image_size", image_size, low=8, integer=True)

    def _root(self, root: str) -> Path:
        folder = Path(root)
        if not root or not folder.is_dir():
            raise ConfigError(
                "data.root",
                f"{root!r} is not a folder; image_folder needs a folder of "
                "class sub-folders (or train/ and test/ folders holding class sub-folders)",
            )
        # a benchmark's extracted root holds class folders one level down (CUB's
        # images/): read as a class tree it would train on one class
        from sphere_engine.data.benchmarks.layouts import MARKERS, detect_layout

        found = detect_layout(folder)
        if found in MARKERS:
            raise ConfigError(
                "data.root",
                f"{root!r} is in the {found} layout "
                f"({', '.join(MARKERS[found])}), not a folder of class sub-folders; "
                f"set data.name = {found}",
            )
        return folder

    def _parts(self, folder: Path) -> list[Path]:
        """The folders holding class sub-folders: [train, test] or [root]."""
        train, test = folder / "train", folder / "test"
        parts = [train, test] if train.is_dir() and test.is_dir() else [folder]
        for part in parts:
            if not _class_dirs(part):
                raise ConfigError("data.root", f"no class sub-folders in {str(part)!r}")
        return parts

    def _class_names(self, parts: list[Path]) -> list[str]:
        return sorted({d.name for part in parts for d in _class_dirs(part)})

    def info(self, root: str, split: str) -> DatasetInfo:
        parts = self._parts(self._root(root))
        shape = (3, self.image_size, self.image_size)
        if split == "standard" and len(parts) == 2:
            return DatasetInfo(len(_class_dirs(parts[0])), len(_class_dirs(parts[1])), shape)
        num_classes = len(self._class_names(parts))
        if split == "standard":
            return DatasetInfo(num_classes, num_classes, shape)
        return DatasetInfo(*class_disjoint_counts(num_classes), shape)

    def build(self, root: str, split: str, download: bool, seed: int) -> DatasetSplits:
        parts = self._parts(self._root(root))
        class_ids = {name: i for i, name in enumerate(self._class_names(parts))}
        scans = [_scan(part, class_ids) for part in parts]
        if split == "standard" and len(parts) == 2:
            (train_paths, train_labels), (test_paths, test_labels) = scans
        else:
            paths = [p for scan in scans for p in scan[0]]
            labels = np.array([label for scan in scans for label in scan[1]], dtype=np.int64)
            train_idx, test_idx = split_indices(labels, split, seed)
            train_paths, train_labels = [paths[i] for i in train_idx], labels[train_idx]
            test_paths, test_labels = [paths[i] for i in test_idx], labels[test_idx]
        for name, found in (("train", train_paths), ("test", test_paths)):
            if not found:
                raise ConfigError("data.root", f"no images for the {name} split under {root!r}")
        train = ImageFolderData(train_paths, train_labels, self.image_size)
        test = ImageFolderData(test_paths, test_labels, self.image_size)
        return DatasetSplits(
            train=train,
            test=test,
            num_classes_train=train.num_classes,
            num_classes_test=test.num_classes,
            input_shape=(3, self.image_size, self.image_size),
            augment=ImageAugment(padding=self.image_size // 8, flip=True, noise_std=0.05),
            pixel_range=PixelRange.of(IMAGENET_MEAN, IMAGENET_STD),
        )
