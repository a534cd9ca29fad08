import numpy as np
import pytest

from sphere_engine.data.splitting import (
    class_disjoint_indices,
    remap_labels,
    split_class_counts,
    stratified_indices,
)


def test_class_disjoint_halves_by_sorted_class_id():
    labels = np.array([9, 2, 5, 2, 7, 9, 4])
    train, test = class_disjoint_indices(labels)
    assert sorted(set(labels[train].tolist())) == [2, 4]  # 5 classes: 2 train, 3 test
    assert sorted(set(labels[test].tolist())) == [5, 7, 9]
    assert sorted(train.tolist() + test.tolist()) == list(range(7))


def test_class_disjoint_needs_two_classes():
    with pytest.raises(ValueError, match="at least 2 classes, got 1"):
        class_disjoint_indices(np.zeros(5, dtype=int))


def test_stratified_keeps_one_of_each_side_for_tiny_classes():
    labels = np.array([0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2])
    train, test = stratified_indices(labels, 0.3, seed=0)
    assert np.bincount(labels[test]).tolist() == [1, 3]  # class 2 (one sample) trains
    assert np.bincount(labels[train]).tolist() == [1, 7, 1]


def test_split_class_counts():
    assert split_class_counts(47, "class_disjoint") == (23, 24)
    assert split_class_counts(47, "standard") == (47, 47)
    with pytest.raises(ValueError, match="split: 'x' is not allowed"):
        split_class_counts(10, "x")


def test_remap_labels():
    remapped, classes = remap_labels(np.array([5, 3, 5]))
    assert remapped.tolist() == [1, 0, 1]
    assert classes.tolist() == [3, 5]
