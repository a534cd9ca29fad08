# ruff: noqa: RUF009 - option() returns dataclasses.field(...) with help metadata
"""The ``data`` section of the run config: which dataset, where, how it is batched."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sphere_engine.catalogue.facts import SPLITS
from sphere_engine.config.crop_scale import DEFAULT_CROP_SCALE
from sphere_engine.config.fields import option


@dataclass
class DataConfig:
    name: str = option(
        "digits", "Dataset (a registered dataset name)", registry="dataset", label="Dataset"
    )
    root: str = option(
        "", "Folder holding the dataset's files (for datasets read from disk)", label="Data folder"
    )
    download: bool = option(
        False, "Download the dataset into `root` if it is missing", label="Download if missing"
    )
    split: str = option(
        "class_disjoint",
        "class_disjoint: first half of the classes trains, the rest tests (metric learning); "
        "standard: the dataset's own train/test split with the same classes",
        choices=SPLITS,
        label="Train/test split",
    )
    folds: int = option(
        0,
        "Validation folds of the training classes (0 = none: evaluation during training "
        "runs on the test split; k >= 2: k class-disjoint folds, evaluation on the "
        "validation classes of data.fold, never on the test classes); needs class_disjoint",
        min=0,
        max=1000,
        label="Validation folds",
    )
    fold: int = option(
        0,
        "Which fold validates (0..folds-1): its validation classes are a contiguous 1/k of "
        "the sorted training classes, the run trains on the others",
        min=0,
        max=999,
        label="Validation fold",
    )
    options: dict[str, Any] = option(
        {}, "Options of the chosen dataset (see its option list)", label="Dataset options"
    )
    batch_size: int = option(40, "Samples per training batch", min=2, max=65536, label="Batch size")
    samples_per_class: int = option(
        8,
        "K of the class-balanced P×K sampler (0 = plain shuffled batches)",
        min=0,
        max=4096,
        label="Samples per class (K)",
    )
    num_workers: int = option(
        -1,
        "DataLoader worker processes (0 = load in the main process; -1 = automatic: half "
        "the cores, at most 8, for datasets decoded from files)",
        min=-1,
        max=64,
        label="Loader workers",
    )
    image_size: int = option(
        0,
        "Side of the square images fed to the model (0 = the backbone's default: 227 "
        "for BN-Inception, 224 for other ImageNet backbones); for datasets read from image files",
        min=0,
        max=4096,
        label="Image size (px)",
    )
    crop_scale: list[float] = option(
        list(DEFAULT_CROP_SCALE),
        "Area range [low, high] of the training random-resized crop, as fractions of the "
        "image (0 < low <= high <= 1; MLRC uses 0.16, 1); for benchmarks read from image files",
        label="Training crop scale",
    )
    resize: int = option(
        0,
        "Short side images are resized to before the crops (0 = the ImageNet convention: "
        "training crops cut from the original image, the test centre crop from a resize "
        "to image_size·256/224; MLRC resizes to 256 for both); for benchmarks read from "
        "image files",
        min=0,
        max=8192,
        label="Resize before cropping (px)",
    )
