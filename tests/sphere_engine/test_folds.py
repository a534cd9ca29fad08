"""Validation folds (SCIENCE.md §9): the fold rule, its config errors, the folds applied to
every dataset kind, and short digits runs that validate on a fold and test once."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sphere_engine.config import ConfigError, RunConfig
from sphere_engine.config.folds import (
    class_ranges,
    expand_class_ranges,
    fold_classes,
)
from sphere_engine.config.validation import validate
from sphere_engine.data import create_dataset
from sphere_engine.data.folds import fold_splits

# ----------------------------------------------------------------------------- the rule


@pytest.mark.parametrize(("count", "folds"), [(8, 4), (5, 2), (10, 3), (7, 7), (100, 4)])
def test_folds_are_class_disjoint_contiguous_and_cover_every_training_class(count, folds):
    classes = list(range(10, 10 + count))[::-1]  # any order, any ids
    seen: list[int] = []
    for fold in range(folds):
        train, validation = fold_classes(classes, folds, fold)
        assert not set(train) & set(validation)
        assert sorted(train + validation) == sorted(classes)
        size = len(validation)
        assert count // folds <= size <= -(-count // folds)  # a 1/k of the classes
        assert validation == list(range(validation[0], validation[0] + size))  # contiguous
        seen += validation
    assert sorted(seen) == sorted(classes)  # disjoint across folds, covering all


def test_fold_numbering_is_mlrcs_and_training_classes_wrap():
    # 8 classes, 4 folds: chunks [0,1] [2,3] [4,5] [6,7]; fold i validates on chunk i-1
    assert fold_classes(range(8), 4, 0) == ([0, 1, 2, 3, 4, 5], [6, 7])
    assert fold_classes(range(8), 4, 1) == ([2, 3, 4, 5, 6, 7], [0, 1])
    assert fold_classes(range(8), 4, 2) == ([4, 5, 6, 7, 0, 1], [2, 3])  # wraps past 7
    assert fold_classes(range(8), 4, 3) == ([6, 7, 0, 1, 2, 3], [4, 5])


def test_class_ranges_round_trip():
    ids = [9, 3, 4, 5, 11, 12, 0]
    assert class_ranges(ids) == [[0, 0], [3, 5], [9, 9], [11, 12]]
    assert expand_class_ranges(class_ranges(ids)) == sorted(ids)
    assert class_ranges([]) == []


# ----------------------------------------------------------------------------- config


def small(**sections: dict) -> dict:
    base: dict = {
        "data": {"name": "digits", "batch_size": 12, "samples_per_class": 4},
        "model": {"name": "mlp", "embedding_dim": 16},
        "training": {"steps": 10},
    }
    for name, values in sections.items():
        base.setdefault(name, {}).update(values)
    return base


@pytest.mark.parametrize(
    ("sections", "path", "message"),
    [
        ({"data": {"folds": 1}}, "data.folds", "1 is not allowed"),
        (
            {"data": {"folds": 2, "split": "standard"}},
            "data.folds",
            "need data.split = 'class_disjoint'",
        ),
        ({"data": {"folds": 3, "fold": 3}}, "data.fold", r"3 is not a fold of data.folds = 3"),
        ({"data": {"fold": 1}}, "data.fold", "0 without data.folds"),
        (
            {"training": {"early_stop_metric": "loss/total"}},
            "training.early_stop_metric",
            "'loss/total' is not an evaluation metric",
        ),
        (
            {"training": {"early_stop_metric": "test/map@r"}},
            "training.early_stop_metric",
            "'test/map@r' is not an evaluation metric",
        ),
        ({"training": {"early_stop_patience": -1}}, "training.early_stop_patience", "minimum"),
    ],
)
def test_bad_fold_and_early_stop_settings_are_one_line_config_errors(sections, path, message):
    with pytest.raises(ConfigError, match=message) as caught:
        RunConfig.from_dict(small(**sections))
    assert caught.value.path == path and "\n" not in str(caught.value)


def test_more_folds_than_training_classes_is_refused_at_validation():
    config = RunConfig.from_dict(small(data={"folds": 6}))  # digits trains on 5 classes
    with pytest.raises(ConfigError, match="6 folds but the training split has only 5") as caught:
        validate(config)
    assert caught.value.path == "data.folds"
    validate(RunConfig.from_dict(small(data={"folds": 5, "batch_size": 8})))


def test_a_fold_trains_on_fewer_classes_and_validation_counts_them():
    # 2 folds of digits' 5 training classes: fold 0 validates on 3 and trains on 2, so a
    # batch of 3 classes cannot be drawn
    config = RunConfig.from_dict(small(data={"folds": 2, "batch_size": 12}))
    with pytest.raises(ConfigError, match="only 2 classes") as caught:
        validate(config)
    assert caught.value.path == "data.batch_size"


def test_new_fields_have_their_defaults_when_an_old_config_is_read():
    config = RunConfig.from_dict(small())  # written before the fields existed
    assert (config.data.folds, config.data.fold) == (0, 0)
    assert (config.training.early_stop_patience, config.training.early_stop_metric) == (
        0,
        "map@r",
    )
    assert config.evaluation.final_test is False


# ----------------------------------------------------------------------------- datasets


def _original(dataset) -> np.ndarray:
    return np.asarray(dataset.classes)[np.asarray(dataset.labels)]


@pytest.mark.parametrize(
    ("name", "options"), [("digits", {}), ("synthetic", {"num_classes": 12, "dim": 4})]
)
def test_fold_splits_of_in_memory_datasets(name, options):
    splits = create_dataset(name, **options)
    original_train = _original(splits.train)
    folded = fold_splits(splits, 2, 1)
    train, validation = fold_classes(splits.train.classes, 2, 1)
    assert sorted(folded.train.classes.tolist()) == sorted(train)
    assert folded.validation.classes.tolist() == validation
    assert folded.test is splits.test and folded.evaluated is folded.validation
    assert folded.num_classes_train == len(train) and folded.info().num_classes_train == len(train)
    # every training sample lands on exactly one side, with its inputs and its class
    assert len(folded.train) + len(folded.validation) == len(splits.train)
    for part, wanted in ((folded.train, train), (folded.validation, validation)):
        assert set(_original(part).tolist()) == set(wanted)
        assert part.labels.max() == len(wanted) - 1  # remapped 0..C-1
        rows = np.flatnonzero(np.isin(original_train, wanted))
        x, y = part.get_batch(torch.arange(len(part)))
        expected, _ = splits.train.get_batch(torch.from_numpy(rows))
        torch.testing.assert_close(x, expected)
        assert y.tolist() == part.labels.tolist()
    assert fold_splits(splits, 0, 0) is splits
