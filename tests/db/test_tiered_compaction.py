"""A live run is compacted in tiers: each compaction rewrites only the newer files, the
run keeps few files, and every reader sees exactly the rows it would see uncompacted."""

from __future__ import annotations

import fcntl
import math
import os
import threading

import numpy as np
import pandas as pd
import pytest
from concurrent_reads import reading_series

from db import layout, queries
from db.compaction import CompactionBusy
from db.layout import compact_name, scan_table
from db.schema import SCALAR_LEVELS, SCALARS
from db.step_grid import step_grid_series

NAMES = ["a", "b"]
FLUSHES = 40
STEPS_PER_FLUSH = 250


def _flush_steps(tracker, flush: int) -> None:
    rng = np.random.default_rng(flush)
    for step in range(flush * STEPS_PER_FLUSH, (flush + 1) * STEPS_PER_FLUSH):
        tracker.track_many({"a": float(rng.normal()), "b": float(step)}, step)
    tracker.flush()


def _grid(store, run_id, max_points: int, use_levels: bool) -> pd.DataFrame:
    return step_grid_series(store.files, [run_id], NAMES, max_points, use_levels=use_levels)


@pytest.fixture
def tiered(store, config):
    """A run written in ``FLUSHES`` flushes, compacted in tiers after each (as its
    tracker does), and the names of the files each compaction rewrote."""
    run_id = store.create_run(config)
    tracker = store.tracker(run_id, flush_interval=3600, compact_every=0)
    folder = store.table_dir(run_id, SCALARS)
    rewritten: list[list[str]] = []
    for flush in range(FLUSHES):
        _flush_steps(tracker, flush)
        before = {p.name for p in scan_table(folder).live}
        store.compact(run_id, full=False)
        after = {p.name for p in scan_table(folder).live}
        rewritten.append(sorted(before - after))
    return run_id, rewritten


def test_a_tiered_compaction_leaves_the_oldest_files_alone(store, tiered):
    """Bug: each compaction rewrote the whole run (1.5 s at 100k steps, 3.6 s at 200k,
    every 30 flushes, in the training process)."""
    run_id, rewritten = tiered
    live = scan_table(store.table_dir(run_id, SCALARS)).live
    assert len(live) <= math.log2(FLUSHES) + 2, [p.name for p in live]
    assert all(layout.compact_range(p.name) for p in live)  # no chunk left behind
    # the last compactions merged the new chunk with the small newest tiers only
    oldest = live[0].name
    assert all(oldest not in names for names in rewritten[-3:]), rewritten[-3:]
    files_rewritten = sum(len(names) for names in rewritten)
    assert files_rewritten <= FLUSHES * (math.log2(FLUSHES) + 1)


def test_tiers_hold_exactly_the_rows_written(store, tiered):
    run_id, _ = tiered
    frame = queries.metric_series(store, run_id, NAMES, max_points=100_000)
    assert len(frame) == 2 * FLUSHES * STEPS_PER_FLUSH
    assert frame.groupby("name")["step"].apply(lambda s: s.is_unique).all()
    # each tier's levels combine like one file's: the bucketed grid equals the raw one
    for max_points in (50, 700):
        with_levels = _grid(store, run_id, max_points, use_levels=True)
        raw = _grid(store, run_id, max_points, use_levels=False)
        assert with_levels.equals(raw)
    levels = scan_table(store.table_dir(run_id, SCALAR_LEVELS))
    scalars = scan_table(store.table_dir(run_id, SCALARS))
    assert sorted(p.name for p in levels.live + levels.covered) == sorted(
        p.name for p in scalars.live
    )  # one levels file per live compacted file, none left over


def test_a_full_compaction_merges_the_tiers_into_one_file(store, tiered):
    run_id, _ = tiered
    before = queries.metric_series(store, run_id, NAMES, max_points=100_000)
    store.set_status(run_id, "running")
    store.end_run(run_id, "finished")
    live = scan_table(store.table_dir(run_id, SCALARS)).live
    last = FLUSHES - 1
    assert [p.name for p in live] == [compact_name(last)]
    assert [p.name for p in scan_table(store.table_dir(run_id, SCALAR_LEVELS)).live] == [
        compact_name(last)
    ]
    after = queries.metric_series(store, run_id, NAMES, max_points=100_000)
    pd.testing.assert_frame_equal(before, after)


def test_readers_during_tiered_compactions_never_fail_or_double_count(store, config):
    run_id = store.create_run(config)
    tracker = store.tracker(run_id, flush_interval=3600, compact_every=0)
    for flush in range(8):
        _flush_steps(tracker, flush)
        store.compact(run_id, full=False)
    with reading_series(store, run_id, "a") as reads:
        for flush in range(8, 16):
            _flush_steps(tracker, flush)
            store.compact(run_id, full=False)
    assert reads.errors == []
    assert reads.counts <= {flush * STEPS_PER_FLUSH for flush in range(8, 17)}


def test_scan_reads_nested_ranges_once_and_keeps_disjoint_ones(tmp_path):
    names = [
        compact_name(9),  # seq 0..9 (and the name an older version wrote)
        compact_name(4),  # inside 0..9: covered
        compact_name(14, 10),
        compact_name(12, 10),  # inside 10..14: covered
        compact_name(16, 15),
        "c-0000000003-ab.parquet",  # inside 0..9: covered
        "c-0000000017-ab.parquet",
    ]
    for name in names:
        (tmp_path / name).write_bytes(b"")
    files = scan_table(tmp_path)
    assert [p.name for p in files.live] == [
        compact_name(9),
        compact_name(14, 10),
        compact_name(16, 15),
        "c-0000000017-ab.parquet",
    ]
    assert sorted(p.name for p in files.covered) == sorted(
        [compact_name(4), compact_name(12, 10), "c-0000000003-ab.parquet"]
    )
    assert files.max_seq == 17


def test_a_busy_run_is_skipped_by_its_tracker_and_waited_for_otherwise(store, config):
    """One compaction per run at a time keeps the compacted ranges nested."""
    run_id = store.create_run(config)
    tracker = store.tracker(run_id, flush_interval=3600, compact_every=1)
    lock = os.open(store.run_dir(run_id) / layout.COMPACTION_LOCK, os.O_RDWR | os.O_CREAT)
    fcntl.flock(lock, fcntl.LOCK_EX)  # as another process compacting the run
    try:
        with pytest.raises(CompactionBusy):
            store.compact(run_id, full=False, wait=False)
        _flush_steps(tracker, 0)  # compact_every=1: tries, finds it busy, goes on
        assert tracker.wait_for_compaction(timeout=30)
        assert [p.name for p in scan_table(store.table_dir(run_id, SCALARS)).live] == [
            p.name for p in store.table_dir(run_id, SCALARS).glob("c-*.parquet")
        ]
        waiting = threading.Thread(target=store.compact, args=(run_id,))
        waiting.start()
        waiting.join(timeout=0.5)
        assert waiting.is_alive()  # a full compaction waits for the lock
    finally:
        os.close(lock)
    waiting.join(timeout=30)
    assert [p.name for p in scan_table(store.table_dir(run_id, SCALARS)).live] == [compact_name(0)]
