"""StoreTracker: every Tracker method lands in the store; flushing; write errors."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from db import StoreTracker, StoreWriteError, compaction, queries
from db.layout import scan_table

TRACKER_METHODS = (
    "track_run_info", "track", "track_many", "track_sample_norms", "track_eval",
    "track_snapshot", "track_checkpoint", "track_progress", "flush",
)  # fmt: skip


def test_implements_the_tracker_protocol(store, config):
    tracker = store.tracker(store.create_run(config))
    assert isinstance(tracker, StoreTracker)
    for method in TRACKER_METHODS:
        assert callable(getattr(tracker, method)), method


def test_every_kind_of_value_round_trips(store, config):
    run_id = store.create_run(config, status="running")
    rng = np.random.default_rng(0)
    embeddings = rng.normal(size=(6, 3)).astype(np.float32)
    with store.tracker(run_id, flush_interval=60) as tracker:
        tracker.track_run_info({"device": "cpu", "parameters": 1234})
        tracker.track(0.5, "loss/total", 0)
        tracker.track_many({"loss/total": 0.25, "norm/var": np.float32(0.125)}, 1)
        tracker.track_sample_norms(np.array([3, 7]), [1.5, 2.5], 1)
        tracker.track_eval({"eval/recall@1": 0.75}, 1)
        tracker.track_snapshot(embeddings, np.array([0, 0, 1, 1, 2, 2]), 1)
        tracker.track_checkpoint("/ckpt/step1.pt", 1)
        tracker.track_progress(1, 300)
    record = store.get_run(run_id)
    assert record.run_info == {"device": "cpu", "parameters": 1234}
    assert record.device == "cpu"
    assert (record.progress_step, record.progress_total) == (1, 300)
    series = queries.metric_series(store, [run_id], ["loss/total", "norm/var"])
    assert series[["name", "step", "value"]].values.tolist() == [
        ["loss/total", 0, 0.5], ["loss/total", 1, 0.25], ["norm/var", 1, 0.125],
    ]  # fmt: skip
    norms = queries.sample_norms(store, run_id)
    assert norms.values.tolist() == [[1, 3, 1.5], [1, 7, 2.5]]
    evals = queries.eval_series(store, run_id)
    assert evals[["step", "name", "value"]].values.tolist() == [[1, "eval/recall@1", 0.75]]
    snap = queries.snapshot(store, run_id, 1)
    assert snap["label"].tolist() == [0, 0, 1, 1, 2, 2]
    np.testing.assert_allclose(snap[["c0", "c1", "c2"]].to_numpy(), embeddings)
    np.testing.assert_allclose(snap["norm"], np.linalg.norm(embeddings, axis=1), rtol=1e-6)
    assert queries.checkpoints(store, run_id)["path"].tolist() == ["/ckpt/step1.pt"]


def test_nothing_is_written_before_a_flush_and_everything_after(store, config):
    run_id = store.create_run(config)
    tracker = store.tracker(run_id, flush_interval=3600)
    for step in range(100):
        tracker.track_many({"a": step, "b": -step}, step)
    assert tracker.buffered_rows() == 200
    assert queries.metric_names(store, run_id) == []
    tracker.flush()
    assert tracker.buffered_rows() == 0
    frame = queries.metric_series(store, run_id, ["a", "b"], max_points=1000)
    assert len(frame) == 200
    assert frame.attrs["total_points"] == {(run_id, "a"): 100, (run_id, "b"): 100}


def test_flush_interval_zero_writes_on_every_call(store, config):
    run_id = store.create_run(config)
    tracker = store.tracker(run_id, flush_interval=0)
    for step in range(3):
        tracker.track(step, "a", step)
    assert tracker.flushes == 3
    assert len(scan_table(store.table_dir(run_id, "scalars")).live) == 3


def test_buffer_limit_forces_a_flush(store, config):
    tracker = store.tracker(store.create_run(config), flush_interval=3600, max_buffer_rows=10)
    for step in range(5):
        tracker.track_many({"a": 1.0, "b": 2.0}, step)
    assert tracker.flushes == 1 and tracker.buffered_rows() == 0


def test_a_second_tracker_continues_the_sequence(store, config):
    run_id = store.create_run(config)
    first = store.tracker(run_id)
    first.track(1.0, "a", 0)
    first.flush()
    second = store.tracker(run_id)
    second.track(2.0, "a", 1)
    second.flush()
    assert queries.metric_series(store, run_id, "a")["value"].tolist() == [1.0, 2.0]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda t: t.track_many({"a": "x"}, 0), "values must be numbers"),
        (lambda t: t.track_many({"": 1.0}, 0), "metric name must be a non-empty string"),
        (lambda t: t.track(1.0, "a", -1), "step must be >= 0"),
        (lambda t: t.track(1.0, "a", 1.5), "step must be an integer"),
        (lambda t: t.track_sample_norms([1, 2], [1.0], 0), "equal length"),
        (lambda t: t.track_snapshot(np.zeros(3), np.zeros(3), 0), "N × d"),
        (lambda t: t.track_checkpoint("", 0), "checkpoint path"),
    ],
)
def test_bad_values_raise_and_leave_the_buffer_consistent(store, config, call, message):
    tracker = store.tracker(store.create_run(config), flush_interval=3600)
    tracker.track(1.0, "a", 0)
    with pytest.raises(ValueError, match=message):
        call(tracker)
    tracker.flush()
    frame = queries.metric_series(store, tracker.run_id, ["a"])
    assert frame["value"].tolist() == [1.0]


def test_tracker_for_unknown_run(store):
    with pytest.raises(ValueError, match="unknown run id"):
        store.tracker("missing-run")
    with pytest.raises(ValueError, match="flush_interval"):
        store.tracker("missing-run", flush_interval=-1)


def test_write_error_is_raised_recorded_and_retried(store, config, monkeypatch):
    run_id = store.create_run(config, status="running")
    tracker = store.tracker(run_id, flush_interval=3600)
    tracker.track_many({"a": 1.0, "b": 2.0}, 0)

    def failing_write(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("db.tracker.write_table_file", failing_write)
    with pytest.raises(StoreWriteError, match=r"^no space left on device writing .*scalars"):
        tracker.flush()
    assert tracker.buffered_rows() == 2  # kept for the next attempt
    assert "no space left on device writing" in store.get_run(run_id).extra["write_error"]
    monkeypatch.undo()
    tracker.flush()
    assert len(queries.metric_series(store, run_id, ["a", "b"])) == 2


def test_flush_after_delete_raises(store, config):
    run_id = store.create_run(config)
    tracker = store.tracker(run_id)
    tracker.track(1.0, "a", 0)
    store.delete_run(run_id)
    with pytest.raises(StoreWriteError, match="no longer exists"):
        tracker.flush()
    assert not os.path.exists(store.run_dir(run_id))


def test_tracker_compacts_its_run_every_n_flushes(store, config):
    run_id = store.create_run(config)
    tracker = store.tracker(run_id, flush_interval=0, compact_every=4)
    for step in range(10):
        tracker.track(float(step), "a", step)
        assert tracker.wait_for_compaction(timeout=30)  # each on its thread, in turn
    files = scan_table(store.table_dir(run_id, "scalars"))
    # flushes 1-4 and 5-8 were compacted; flushes 9 and 10 are still chunks
    assert [p.name.split("-")[0] for p in files.live] == ["compact", "c", "c"]
    assert queries.metric_series(store, run_id, "a")["value"].tolist() == list(
        map(float, range(10))
    )


def test_a_compaction_runs_beside_the_training_step_not_in_it(store, config, monkeypatch):
    """The flush that triggers a compaction returns at once (the step would wait for a
    whole tier merge otherwise); a compaction still running is not started twice."""
    run_id = store.create_run(config)
    release = threading.Event()
    calls: list[tuple[str, dict]] = []

    def slow_compact(files, run, **options):
        calls.append((threading.current_thread().name, options))
        release.wait(30)

    monkeypatch.setattr(compaction, "compact_run", slow_compact)
    tracker = store.tracker(run_id, flush_interval=0, compact_every=1)
    tracker.track(1.0, "a", 1)  # flush 1: starts a compaction, which blocks
    tracker.track(2.0, "a", 2)  # flush 2: the first still runs
    assert not tracker.wait_for_compaction(timeout=0.2)  # still blocked, step done
    release.set()
    assert tracker.wait_for_compaction(timeout=30)
    assert calls == [(f"compact-{run_id}", {"full": False, "wait": False})]
    assert queries.metric_series(store, run_id, "a")["value"].tolist() == [1.0, 2.0]
