"""A run that a live page watches flushes more often (db.tracker watched_flush_interval):
what the page waits for between a step being logged and drawing it is mostly the next
flush. Compaction, which rewrites files, keeps its unwatched cadence in time."""

from __future__ import annotations

import os
import time

import pytest

from db import compaction, run_status
from db import tracker as tracker_module
from db.store import RunStore


@pytest.fixture
def clock(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(tracker_module.time, "monotonic", lambda: now[0])
    return now


def _run(store: RunStore) -> str:
    return store.create_run({}, "watched", status="running")


def test_a_watched_run_flushes_at_the_watched_interval(tmp_path, clock):
    store = RunStore(tmp_path)
    run_id = _run(store)
    tracker = store.tracker(run_id, flush_interval=1.0, watched_flush_interval=0.25)
    tracker.track_many({"a": 1.0}, 1)
    clock[0] += 0.3
    tracker.track_many({"a": 2.0}, 2)
    assert tracker.flushes == 0  # nobody watches: every 1 s
    store.mark_watched(run_id)
    clock[0] += 1.0  # the marker is looked at again (every WATCH_POLL_S)
    tracker.track_many({"a": 3.0}, 3)
    assert tracker.flushes == 1
    clock[0] += 0.3
    tracker.track_many({"a": 4.0}, 4)
    assert tracker.flushes == 2  # watched: every 0.25 s
    clock[0] += 0.1
    tracker.track_many({"a": 5.0}, 5)
    assert tracker.flushes == 2


def test_the_marker_expires(tmp_path):
    store = RunStore(tmp_path)
    run_id = _run(store)
    assert not store.is_watched(run_id)
    store.mark_watched(run_id)
    assert store.is_watched(run_id)
    marker = store.run_dir(run_id) / "watched"
    old = time.time() - run_status.WATCHED_FOR_S - 1
    os.utime(marker, (old, old))
    assert not store.is_watched(run_id)


def test_watched_flushes_do_not_compact_more_often(tmp_path, clock, monkeypatch):
    store = RunStore(tmp_path)
    run_id = _run(store)
    store.mark_watched(run_id)
    compactions = []
    monkeypatch.setattr(compaction, "compact_run", lambda files, run, **_: compactions.append(run))
    tracker = store.tracker(run_id, flush_interval=1.0, watched_flush_interval=0.5, compact_every=2)
    for step in range(1, 5):  # four watched flushes, 0.5 s apart: 2 s of flushing
        clock[0] += 0.5
        tracker.track_many({"a": float(step)}, step)
        assert tracker.wait_for_compaction(timeout=30)
    assert tracker.flushes == 4
    assert len(compactions) == 1  # as two unwatched flushes (1 s apart) would
