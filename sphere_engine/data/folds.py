"""A fold's training and validation classes applied to a dataset, once for every dataset:
``fold_splits`` divides ``DatasetSplits.train`` by class (the rule is
``sphere_engine.config.folds.fold_classes``); the test split is untouched."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from sphere_engine.config.folds import fold_classes
from sphere_engine.data.dataset_info import DatasetInfo
from sphere_engine.data.dataset_splits import DatasetSplits


def fold_info(info: DatasetInfo, folds: int, fold: int) -> DatasetInfo:
    """``info`` with the training class count of ``fold`` (unchanged without folds);
    ``ConfigError`` on ``data.folds`` for more folds than training classes."""
    if not folds:
        return info
    train, _ = fold_classes(range(info.num_classes_train), folds, fold)
    return replace(info, num_classes_train=len(train))


def fold_splits(splits: DatasetSplits, folds: int, fold: int) -> DatasetSplits:
    """``splits`` with its training set divided by class: ``train`` keeps the fold's
    training classes and ``validation`` holds its validation classes, each a dataset of
    the same kind (``subset``: labels remapped, ``classes`` the original ids). Without
    folds, ``splits`` unchanged."""
    if not folds:
        return splits
    train: Any = splits.train
    original = np.asarray(train.classes)[np.asarray(train.labels)]
    kept, held_out = fold_classes(train.classes, folds, fold)
    training = train.subset(np.flatnonzero(np.isin(original, kept)))
    validation = train.subset(np.flatnonzero(np.isin(original, held_out)))
    return replace(
        splits, train=training, validation=validation, num_classes_train=training.num_classes
    )
