"""Curves (the verification ROC): StoreTracker.track_curve and queries.latest_curves."""

from __future__ import annotations

import numpy as np
import pytest

from db import queries
from sphere_engine.tracking import Tracker


def test_the_store_tracker_is_a_tracker_with_curves(store, config):
    tracker = store.tracker(store.create_run(config))
    assert isinstance(tracker, Tracker)
    assert callable(tracker.track_curve)


def test_each_run_gets_its_latest_curve_in_point_order(store, config):
    first = store.create_run(config, status="running")
    second = store.create_run(config, status="running")
    with store.tracker(first, flush_interval=60) as tracker:
        tracker.track_curve("verification/roc", [0.01, 0.1, 1.0], [0.2, 0.5, 1.0], 10)
        tracker.track_curve("other", [5.0], [6.0], 30)
        tracker.flush()
        tracker.track_curve("verification/roc", [0.001, 0.5, 1.0], [0.3, 0.9, 1.0], 20)
    with store.tracker(second, flush_interval=60) as tracker:
        tracker.track_curve("verification/roc", np.array([0.2, 1.0]), np.array([0.4, 1.0]), 5)
    store.compact(first)  # compacted and raw chunks read the same
    frame = queries.latest_curves(store, [first, second], "verification/roc")
    assert list(frame.columns) == ["run_id", "step", "point", "x", "y"]
    got = frame.sort_values(["run_id", "point"])
    by_run = {run: part for run, part in got.groupby("run_id")}
    assert by_run[first]["step"].tolist() == [20, 20, 20]
    assert by_run[first]["x"].tolist() == [0.001, 0.5, 1.0]
    assert by_run[first]["y"].tolist() == [0.3, 0.9, 1.0]
    assert by_run[second]["x"].tolist() == [0.2, 1.0]


def test_no_curve_gives_an_empty_frame(store, config):
    run_id = store.create_run(config)
    frame = queries.latest_curves(store, [run_id], "verification/roc")
    assert frame.empty and list(frame.columns) == ["run_id", "step", "point", "x", "y"]


def test_mismatched_curve_is_refused(store, config):
    tracker = store.tracker(store.create_run(config, status="running"))
    with pytest.raises(ValueError, match="x and y must be 1-D of one length"):
        tracker.track_curve("verification/roc", [0.1, 1.0], [0.5], 1)
