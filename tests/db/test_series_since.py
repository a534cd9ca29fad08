"""db.series.metric_series(since_step=...): the points a live page has not seen yet."""

from __future__ import annotations

import pytest

from db import queries
from db.store import RunStore


def _run(store: RunStore, steps: range) -> str:
    run_id = store.create_run({}, "live", status="running")
    with store.tracker(run_id, flush_interval=0) as tracker:
        for step in steps:
            tracker.track_many({"a": float(step), "b": -float(step)}, step)
    return run_id


def test_only_points_after_the_step_every_one_of_them(tmp_path):
    store = RunStore(tmp_path)
    run_id = _run(store, range(1, 101))
    frame = queries.metric_series(store, [run_id], ["a"], max_points=10, since_step=95)
    assert frame["step"].tolist() == [96, 97, 98, 99, 100]
    assert frame["value"].tolist() == frame["min"].tolist() == frame["max"].tolist()
    assert frame.attrs["total_points"] == {(run_id, "a"): 5}
    assert queries.metric_series(store, [run_id], ["a"], since_step=100).empty
    with store.tracker(run_id, flush_interval=0) as tracker:  # the run goes on
        tracker.track_many({"a": 101.0}, 101)
    assert queries.metric_series(store, [run_id], ["a", "b"], since_step=100)[
        ["name", "step"]
    ].values.tolist() == [["a", 101]]


def test_since_step_must_be_an_integer(tmp_path):
    store = RunStore(tmp_path)
    run_id = _run(store, range(1, 3))
    with pytest.raises(ValueError, match="since_step"):
        queries.metric_series(store, [run_id], ["a"], since_step="1; DROP")


def test_since_bucket_sends_each_bucket_of_new_points_once(tmp_path):
    """A run logging hundreds of steps a second: the live page asks for the new points
    in buckets of ``since_bucket`` steps (last value, min, max at the bucket's last step)."""
    store = RunStore(tmp_path)
    run_id = _run(store, range(1, 101))
    frame = queries.metric_series(store, [run_id], ["a"], since_step=90, since_bucket=4)
    # steps 91..100 fall in buckets 22 (91), 23 (92-95), 24 (96-99) and 25 (100)
    assert frame["step"].tolist() == [91, 95, 99, 100]
    assert frame["value"].tolist() == [91.0, 95.0, 99.0, 100.0]
    assert frame["min"].tolist() == [91.0, 92.0, 96.0, 100.0]
    assert frame["max"].tolist() == [91.0, 95.0, 99.0, 100.0]
    assert frame.attrs["total_points"] == {(run_id, "a"): 10}
    with pytest.raises(ValueError, match="since_bucket"):
        queries.metric_series(store, [run_id], ["a"], since_step=90, since_bucket=0)
