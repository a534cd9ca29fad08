"""Compaction keeps exactly the same data and never shows a row twice to a reader."""

from __future__ import annotations

import numpy as np
import pandas as pd
from concurrent_reads import reading_series

from db import queries
from db.layout import compact_name, scan_table


def _chunked_run(store, config, flushes=5, steps_per_flush=200):
    run_id = store.create_run(config)
    tracker = store.tracker(run_id, flush_interval=3600)
    for step in range(flushes * steps_per_flush):
        tracker.track_many({"a": float(step), "b": -float(step)}, step)
        tracker.track_sample_norms([0, 1], [1.0, 2.0], step)
        if step % steps_per_flush == steps_per_flush - 1:
            tracker.flush()
    tracker.track_eval({"eval/x": 1.0}, 5)
    tracker.track_snapshot(np.ones((3, 2), np.float32), np.arange(3), 5)
    tracker.flush()
    return run_id


def _everything(store, run_id):
    return {
        "series": queries.metric_series(store, run_id, ["a", "b"], max_points=10_000),
        "norms": queries.sample_norms(store, run_id, max_points=10_000),
        "evals": queries.eval_series(store, run_id),
        "snapshot": queries.snapshot(store, run_id, 5),
    }


def test_compaction_leaves_the_same_data(store, config):
    run_id = _chunked_run(store, config)
    before = _everything(store, run_id)
    assert len(scan_table(store.table_dir(run_id, "scalars")).live) == 5
    merged = store.compact(run_id)
    assert merged["scalars"] == 5 and merged["evals"] == 1
    files = scan_table(store.table_dir(run_id, "scalars"))
    assert [p.name for p in files.live] == [compact_name(4)] and files.covered == []
    after = _everything(store, run_id)
    for key, frame in before.items():
        pd.testing.assert_frame_equal(frame.reset_index(drop=True), after[key], check_like=True)
    assert len(before["series"]) == 2000


def test_writing_after_compaction_and_compacting_again(store, config):
    run_id = _chunked_run(store, config, flushes=2)
    store.compact(run_id)
    tracker = store.tracker(run_id)
    tracker.track(7.0, "a", 400)
    tracker.flush()
    assert queries.metric_series(store, run_id, "a", max_points=10_000)["step"].max() == 400
    store.compact(run_id)
    frame = queries.metric_series(store, run_id, "a", max_points=10_000)
    assert len(frame) == 401 and frame["step"].is_unique
    assert len(scan_table(store.table_dir(run_id, "scalars")).live) == 1


def test_compaction_of_an_empty_run_is_a_no_op(store, config):
    run_id = store.create_run(config)
    assert set(store.compact(run_id).values()) == {0}


def test_chunks_covered_by_a_compacted_file_are_never_read_twice(store, config):
    """The moment between writing the compacted file and deleting the chunks."""
    run_id = _chunked_run(store, config, flushes=3)
    folder = store.table_dir(run_id, "scalars")
    chunks = sorted(folder.glob("c-*.parquet"))
    merged = pd.concat([pd.read_parquet(p) for p in chunks])
    merged.to_parquet(folder / compact_name(2))  # as compaction writes it, chunks still there
    frame = queries.metric_series(store, run_id, ["a"], max_points=10_000)
    assert len(frame) == 600 and frame["step"].is_unique


def test_readers_during_compaction_never_fail_or_double_count(store, config):
    runs = [_chunked_run(store, config, flushes=8, steps_per_flush=50) for _ in range(3)]
    with reading_series(store, runs, "a") as reads:
        for run_id in runs:
            store.compact(run_id)
    assert reads.errors == []
    assert reads.counts == {3 * 400}


def test_end_run_sets_the_status_and_compacts(store, config):
    run_id = _chunked_run(store, config)
    store.set_status(run_id, "running")
    before = _everything(store, run_id)
    assert len(scan_table(store.table_dir(run_id, "scalars")).live) == 5
    store.end_run(run_id, "finished")
    assert len(scan_table(store.table_dir(run_id, "scalars")).live) == 1
    after = _everything(store, run_id)
    for key in before:
        pd.testing.assert_frame_equal(before[key], after[key])


def test_set_status_alone_never_compacts(store, config):
    """The reaper and the Celery parent must not start DuckDB/Arrow pools (fork safety)."""
    run_id = _chunked_run(store, config)
    store.set_status(run_id, "running")
    store.set_status(run_id, "lost", "heartbeat stopped")
    assert len(scan_table(store.table_dir(run_id, "scalars")).live) == 5
