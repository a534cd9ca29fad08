"""Base class of the registered datasets."""

from __future__ import annotations

from abc import ABC, abstractmethod

from sphere_engine.data.dataset_info import DatasetInfo
from sphere_engine.data.dataset_splits import DatasetSplits


class DatasetSpec(ABC):
    """A registered dataset: its ``__init__`` takes the dataset-specific options (listed
    by ``DATASETS.params(name)``, with help text in ``param_help``); ``build`` loads the
    splits and ``info`` answers cheaply (no image decoding) for validation."""

    param_help: dict[str, str] = {}  # noqa: RUF012 - read-only class-level help texts

    @abstractmethod
    def build(self, root: str, split: str, download: bool, seed: int) -> DatasetSplits:
        """Load the data and return the train/test splits of ``split``."""

    @abstractmethod
    def info(self, root: str, split: str) -> DatasetInfo:
        """Class counts and input shape of ``split``, without loading samples."""
