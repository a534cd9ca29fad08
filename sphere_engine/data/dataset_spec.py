"""Base class of the registered datasets."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from sphere_engine.data.dataset_info import DatasetInfo
from sphere_engine.data.dataset_splits import DatasetSplits
from sphere_engine.registry import ComponentTraits


class DatasetSpec(ABC):
    """A registered dataset: its ``__init__`` takes the dataset-specific options (listed
    by ``DATASETS.params(name)``, with help text in ``param_help``); ``build`` loads the
    splits and ``info`` answers cheaply (no image decoding) for validation."""

    param_help: ClassVar[dict[str, str]] = {}
    # Datasets need nothing from other components; a spec may override this.
    traits: ClassVar[ComponentTraits] = ComponentTraits()
    # Whether ``build`` declares ``DatasetSplits.pixel_range`` (images and pixel vectors
    # do); adversarial robustness needs it (``validation.validate`` asks).
    has_pixel_range: ClassVar[bool] = True

    @abstractmethod
    def build(self, root: str, split: str, download: bool, seed: int) -> DatasetSplits:
        """Load the data and return the train/test splits of ``split``."""

    def check_files(self, root: str, download: bool) -> None:
        """``ValueError`` naming ``data.root`` if ``build`` could not find its files
        there (cheap: no loading). Datasets that read nothing from disk accept any root."""
        return None

    @abstractmethod
    def info(self, root: str, split: str) -> DatasetInfo:
        """Class counts and input shape of ``split``, without loading samples."""
