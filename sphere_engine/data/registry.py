"""The ``DATASETS`` registry: dataset specs, built by name and then loaded.

A registered class (a ``DatasetSpec``) takes only the user options; ``create_dataset``
builds it through ``DATASETS.create`` and then loads and splits the data.
"""

from __future__ import annotations

from typing import Any

from sphere_engine.data.dataset_info import DatasetInfo
from sphere_engine.data.dataset_spec import DatasetSpec
from sphere_engine.data.dataset_splits import DatasetSplits
from sphere_engine.data.splitting import check_split
from sphere_engine.registry import Registry

DATASETS: Registry[DatasetSpec] = Registry("dataset", "data.options")


def create_dataset(
    name: str,
    *,
    root: str = "",
    split: str = "class_disjoint",
    download: bool = False,
    seed: int = 0,
    **options: Any,
) -> DatasetSplits:
    """Load dataset ``name`` and split it (``class_disjoint`` or ``standard``).

    Unknown names, splits or options raise ``ValueError``; so do missing files.
    """
    check_split(split)
    return DATASETS.create(name, **options).build(root, split, download, seed)


def dataset_info(
    name: str,
    *,
    root: str = "",
    split: str = "class_disjoint",
    download: bool | None = None,
    **options: Any,
) -> DatasetInfo:
    """Class counts and input shape of ``name`` under ``split``, without loading images.

    With ``download`` given (as validation does), the dataset's files must also be
    under ``root`` or downloadable: a missing root fails here, before a run is recorded.
    """
    check_split(split)
    spec = DATASETS.create(name, **options)
    if download is not None:
        spec.check_files(root, download)
    return spec.info(root, split)
