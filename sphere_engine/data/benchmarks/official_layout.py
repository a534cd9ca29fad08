"""Base of the benchmark datasets read from their official files and splits."""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from sphere_engine.config.config_error import ConfigError
from sphere_engine.config.crop_scale import DEFAULT_CROP_SCALE, check_crop_scale
from sphere_engine.config.option_checks import OptionError, check_option
from sphere_engine.data.benchmarks.layouts import MARKERS, detect_layout, find_marker
from sphere_engine.data.dataset_info import DatasetInfo
from sphere_engine.data.dataset_spec import DatasetSpec
from sphere_engine.data.dataset_splits import DatasetSplits, PixelRange
from sphere_engine.data.image_augment import ImageAugment
from sphere_engine.data.image_folder_data import IMAGENET_MEAN, IMAGENET_STD, ImageFolderData
from sphere_engine.data.image_pipeline import test_transform, train_transform


@dataclass
class Listing:
    """Every image of a benchmark: its path, its original class id, its part of the
    official protocol (``train``, ``test``, or In-Shop's ``query`` / ``gallery``) and
    the class names (by class id) where the dataset has them."""

    paths: list[Path]
    labels: np.ndarray  # (N,) int64 original class ids
    parts: np.ndarray  # (N,) str
    class_names: dict[int, str]

    def select(self, *parts: str) -> np.ndarray:
        return np.flatnonzero(np.isin(self.parts, parts))


class OfficialLayout(DatasetSpec):
    """A benchmark read from ``data.root`` (the extracted official folder) with its
    standard class-disjoint protocol. ``data.split`` must be ``class_disjoint``: the
    benchmark's own split is the protocol. A missing file is named at launch, and a
    root that holds another dataset says which layout it found."""

    #: The registered name; its files are ``layouts.MARKERS[layout]``.
    layout: ClassVar[str] = ""
    #: Test parts that are evaluated query → gallery (In-Shop).
    query_part: ClassVar[str | None] = None
    param_help: ClassVar[dict[str, str]] = {
        "image_size": "Side of the square crops fed to the model (data.image_size sets it)",
        "crop_scale": "Area range of the training random-resized crop (data.crop_scale sets it)",
        "resize": "Short side resized to before the crops, 0 = none (data.resize sets it)",
    }

    def __init__(
        self,
        image_size: int = 224,
        crop_scale: tuple[float, float] = DEFAULT_CROP_SCALE,
        resize: int = 0,
    ) -> None:
        self.image_size = check_option("image_size", image_size, low=8, integer=True)
        self.crop_scale = check_crop_scale(crop_scale, "crop_scale")
        self.resize = check_option("resize", resize, low=0, integer=True)
        if 0 < self.resize < self.image_size:  # a larger centre crop would pad the image
            raise OptionError("resize", resize, f"0 or at least image_size ({self.image_size})")

    @abstractmethod
    def listing(self, root: Path) -> Listing:
        """Read the official lists under ``root`` (markers checked already)."""

    # -- files ----------------------------------------------------------------------
    def marker(self, root: Path, name: str) -> Path:
        path = find_marker(root, name)
        if path is None:
            raise ConfigError("data.root", f"{name} is missing under {str(root)!r}")
        return path

    def _root(self, root: str) -> Path:
        folder = Path(root).expanduser()
        if not root or not folder.is_dir():
            raise ConfigError(
                "data.root",
                f"{root!r} is not a folder; {self.layout} needs the extracted "
                f"official folder holding {', '.join(MARKERS[self.layout])}",
            )
        missing = [name for name in MARKERS[self.layout] if find_marker(folder, name) is None]
        if missing:
            found = detect_layout(folder)
            hint = f"; it looks like the {found} layout" if found and found != self.layout else ""
            raise ConfigError(
                "data.root",
                f"{missing[0]} is missing under {root!r}, so it is not the "
                f"{self.layout} layout{hint}",
            )
        return folder

    def check_files(self, root: str, download: bool) -> None:
        self._root(root)

    def _read(self, root: str, split: str) -> Listing:
        if split != "class_disjoint":
            raise ConfigError(
                "data.split",
                f"{split!r} is not available for {self.layout}; its official "
                "protocol is class-disjoint (split = 'class_disjoint')",
            )
        listing = self.listing(self._root(root))
        for part in ("train", "test"):
            if not len(listing.select(*self._parts(part))):
                raise ConfigError("data.root", f"no {part} images listed under {root!r}")
        return listing

    def _parts(self, part: str) -> tuple[str, ...]:
        if part == "test" and self.query_part:
            return ("query", "gallery")
        return (part,)

    # -- DatasetSpec ----------------------------------------------------------------
    def info(self, root: str, split: str) -> DatasetInfo:
        listing = self._read(root, split)
        counts = [
            len(np.unique(listing.labels[listing.select(*self._parts(p))]))
            for p in ("train", "test")
        ]
        return DatasetInfo(counts[0], counts[1], (3, self.image_size, self.image_size))

    def build(self, root: str, split: str, download: bool, seed: int) -> DatasetSplits:
        listing = self._read(root, split)
        size = self.image_size
        train_crops = train_transform(size, self.crop_scale, self.resize)
        train = self._part(listing, self._parts("train"), train_crops)
        test = self._part(listing, self._parts("test"), test_transform(size, self.resize))
        if self.query_part:
            test.is_query = listing.parts[listing.select(*self._parts("test"))] == "query"
        return DatasetSplits(
            train=train,
            test=test,
            num_classes_train=train.num_classes,
            num_classes_test=test.num_classes,
            input_shape=(3, size, size),
            augment=ImageAugment(padding=size // 8, flip=True, noise_std=0.0),
            pixel_range=PixelRange.of(IMAGENET_MEAN, IMAGENET_STD),
        )

    def _part(self, listing: Listing, parts: tuple[str, ...], transform) -> ImageFolderData:
        rows = listing.select(*parts)
        labels = listing.labels[rows]
        names = [listing.class_names.get(int(c), str(c)) for c in np.unique(labels)]
        return ImageFolderData(
            [listing.paths[i] for i in rows],
            labels,
            self.image_size,
            transform=transform,
            class_names=names,
        )
