"""Train/test splits by class (metric learning) or stratified by sample (classifiers)."""

from __future__ import annotations

import numpy as np

from sphere_engine.catalogue.facts import SPLITS


def check_split(split: str) -> None:
    """Raise ``ValueError`` for a split name other than those in ``SPLITS``."""
    if split not in SPLITS:
        raise ValueError(f"split: {split!r} is not allowed; choose one of {', '.join(SPLITS)}")


def class_disjoint_counts(num_classes: int) -> tuple[int, int]:
    """Train and test class counts of the class-disjoint split (first half trains)."""
    return num_classes // 2, num_classes - num_classes // 2


def split_class_counts(num_classes: int, split: str) -> tuple[int, int]:
    """Train and test class counts of ``split`` for a dataset of ``num_classes``."""
    check_split(split)
    if split == "class_disjoint":
        return class_disjoint_counts(num_classes)
    return num_classes, num_classes


def class_disjoint_indices(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the samples of the first half of the classes (sorted by class id) and
    of the rest. ``labels``: (N,) ints. Returns two sorted int64 index arrays."""
    classes = np.unique(labels)
    if len(classes) < 2:
        raise ValueError(f"class_disjoint split needs at least 2 classes, got {len(classes)}")
    num_train, _ = class_disjoint_counts(len(classes))
    in_train = np.isin(labels, classes[:num_train])
    return np.flatnonzero(in_train), np.flatnonzero(~in_train)


def stratified_indices(
    labels: np.ndarray, test_fraction: float, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Deterministic stratified split: ``test_fraction`` of each class (rounded, at least
    one sample when the class has two or more) goes to test. ``labels``: (N,) ints.
    Returns two sorted int64 index arrays."""
    rng = np.random.default_rng(seed)
    train, test = [], []
    for label in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == label))
        num_test = round(len(members) * test_fraction)
        if len(members) >= 2:
            num_test = min(max(num_test, 1), len(members) - 1)
        test.append(members[:num_test])
        train.append(members[num_test:])
    return np.sort(np.concatenate(train)), np.sort(np.concatenate(test))


def remap_labels(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Map labels to 0..C-1 in sorted class order. Returns (remapped int64 labels (N,),
    original class ids (C,))."""
    classes, remapped = np.unique(np.asarray(labels), return_inverse=True)
    return remapped.astype(np.int64), classes


def split_indices(labels: np.ndarray, split: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Train and test indices of ``split`` for one pool of samples without its own test
    set: class-disjoint halves, or a stratified 70/30 split by ``seed``."""
    check_split(split)
    if split == "class_disjoint":
        return class_disjoint_indices(labels)
    return stratified_indices(labels, test_fraction=0.3, seed=seed)
