"""Server-side downsampling: true bucket min/max/last, one grid shared by all runs."""

from __future__ import annotations

import numpy as np
import pytest

from db import queries


def _run_with(store, config, values: dict[str, np.ndarray]) -> str:
    run_id = store.create_run(config)
    tracker = store.tracker(run_id, flush_interval=3600)
    length = len(next(iter(values.values())))
    for step in range(length):
        tracker.track_many({name: float(v[step]) for name, v in values.items()}, step)
    tracker.flush()
    return run_id


def test_buckets_keep_true_min_max_and_last(store, config):
    rng = np.random.default_rng(1)
    values = rng.normal(size=10_000)
    values[4321] = 50.0  # a spike that plain decimation would lose
    values[777] = -40.0
    run_id = _run_with(store, config, {"loss/total": values})
    frame = queries.metric_series(store, [run_id], ["loss/total"], max_points=100)
    # 100 steps per bucket, rounded up to a multiple of the level 64: 79 buckets.
    width = 128
    assert frame["step"].tolist() == list(range(0, 10_000, width))
    buckets = [values[s : s + width] for s in range(0, 10_000, width)]
    np.testing.assert_array_equal(frame["min"], [b.min() for b in buckets])
    np.testing.assert_array_equal(frame["max"], [b.max() for b in buckets])
    np.testing.assert_array_equal(frame["value"], [b[-1] for b in buckets])
    assert frame["max"].max() == 50.0 and frame["min"].min() == -40.0
    assert frame.attrs["total_points"] == {(run_id, "loss/total"): 10_000}


def test_grid_is_shared_by_runs_of_different_lengths(store, config):
    short = _run_with(store, config, {"a": np.arange(1000.0)})
    long = _run_with(store, config, {"a": np.arange(5000.0)})
    frame = queries.metric_series(store, [short, long], ["a"], max_points=50)
    width = 128  # from the longest run: 100 steps rounded up to a multiple of 64
    steps_short = frame[frame.run_id == short]["step"].tolist()
    steps_long = frame[frame.run_id == long]["step"].tolist()
    assert steps_long == list(range(0, 5000, width))
    assert steps_short == list(range(0, 1000, width))  # the same grid points
    expected_max = [min(s + width - 1.0, 999.0) for s in steps_short]
    assert frame[frame.run_id == short]["max"].tolist() == expected_max
    assert frame.groupby("run_id").size().max() <= 50


def test_short_series_are_not_downsampled(store, config):
    run_id = _run_with(store, config, {"a": np.array([3.0, 1.0, 2.0])})
    frame = queries.metric_series(store, run_id, "a", max_points=1000)
    assert frame[["step", "value", "min", "max"]].values.tolist() == [
        [0, 3.0, 3.0, 3.0], [1, 1.0, 1.0, 1.0], [2, 2.0, 2.0, 2.0],
    ]  # fmt: skip


def test_non_finite_values_do_not_hide_the_range(store, config):
    values = np.array([1.0, np.nan, 3.0, np.inf, 2.0, 5.0])
    run_id = _run_with(store, config, {"a": values})
    frame = queries.metric_series(store, run_id, ["a"], max_points=2)
    assert frame["min"].tolist() == [1.0, 2.0]
    assert frame["max"].tolist() == [3.0, 5.0]
    assert frame["value"].tolist() == [3.0, 5.0]


def test_time_axis(store, config):
    run_id = _run_with(store, config, {"a": np.arange(500.0)})
    frame = queries.metric_series(store, run_id, ["a"], max_points=10, x="time")
    assert 1 <= len(frame) <= 10
    assert frame["time"].iloc[0] == 0.0
    assert frame["time"].is_monotonic_increasing
    assert frame["value"].iloc[-1] == 499.0 and frame["step"].iloc[-1] == 499


def test_unknown_names_and_bad_arguments(store, config):
    run_id = _run_with(store, config, {"a": np.arange(5.0)})
    frame = queries.metric_series(store, [run_id], ["no/such/metric"])
    assert frame.empty
    assert list(frame.columns) == ["run_id", "name", "step", "value", "min", "max", "wall_time"]
    assert queries.metric_series(store, [], ["a"]).empty
    with pytest.raises(ValueError, match="unknown run id 'ghost'"):
        queries.metric_series(store, [run_id, "ghost"], ["a"])
    with pytest.raises(ValueError, match="max_points"):
        queries.metric_series(store, [run_id], ["a"], max_points=0)
    with pytest.raises(ValueError, match="x must be"):
        queries.metric_series(store, [run_id], ["a"], x="epoch")


def test_names_are_bound_not_spliced(store, config):
    run_id = _run_with(store, config, {"a": np.arange(3.0)})
    evil = "a') OR TRUE OR (name = 'x"
    assert queries.metric_series(store, [run_id], [evil]).empty
    assert queries.eval_series(store, [run_id], [evil]).empty


def test_sample_norms_downsampled(store, config):
    run_id = store.create_run(config)
    tracker = store.tracker(run_id, flush_interval=3600)
    for step in range(1000):
        tracker.track_sample_norms([0, 1], [step, 2.0 * step], step)
    tracker.flush()
    frame = queries.sample_norms(store, run_id, max_points=10)
    assert list(frame.columns) == ["step", "sample", "norm"]
    assert frame[frame["sample"] == 1]["norm"].tolist() == [2.0 * s for s in range(99, 1000, 100)]
    assert frame[frame["sample"] == 0]["step"].tolist() == list(range(0, 1000, 100))
