"""Snapshots keep the dataset's own class ids: a class-disjoint digits test split shows
classes 5-9 on the Geometry page, not 0-4."""

from __future__ import annotations

import numpy as np

from sphere_engine.evaluation.evaluator import original_classes
from sphere_engine.tracking import InMemoryTracker
from sphere_engine.train import run_training
from tests.sphere_engine.test_train import digits_config


def test_class_disjoint_snapshot_labels_are_the_test_classes() -> None:
    tracker = InMemoryTracker()
    config = digits_config(data={"split": "class_disjoint"}, training={"steps": 2})
    run_training(config, tracker)
    _, _, labels = tracker.snapshots[-1]
    assert set(np.unique(labels)) == {5, 6, 7, 8, 9}


def test_labels_without_class_ids_are_kept() -> None:
    class Plain:
        classes = None

    labels = np.array([0, 1, 1])
    assert original_classes(Plain(), labels) is labels

    class Named:
        classes = np.array([3, 7])

    assert list(original_classes(Named(), labels)) == [3, 7, 7]
