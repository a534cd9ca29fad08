"""The one lost-run rule (``db.lost_runs``), used by the reaper, ``spherescope status``
and ``RunStore.mark_lost_runs``, and its race guard."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest

import db.lost_runs
from db.lost_runs import mark_lost_runs


def test_only_running_runs_silent_for_longer_than_the_limit_are_lost(store, config):
    stale, fresh, queued = (store.create_run(config) for _ in range(3))
    for run_id in (stale, fresh):
        store.set_status(run_id, "running", host="node-1")
    store.heartbeat(stale)
    time.sleep(0.2)
    store.heartbeat(fresh)
    now = store.get_run(fresh).heartbeat_at + timedelta(seconds=10)

    assert mark_lost_runs(store, 10.1, now) == [stale]
    record = store.get_run(stale)
    assert record.status == "lost"
    assert record.status_message.startswith("no heartbeat for 10 s")
    assert "host node-1" in record.status_message
    assert [store.get_run(r).status for r in (fresh, queued)] == ["running", "queued"]
    assert store.mark_lost_runs(max_silence_s=0) == [fresh]  # the store's method: same rule


def _stale_listing(monkeypatch, store, run_id):
    """``list_runs`` answers with the record as it was before the run's latest change."""
    snapshot = store.get_run(run_id)
    monkeypatch.setattr(db.lost_runs, "list_runs", lambda catalogue, status: [snapshot])


def test_a_run_that_beat_after_the_listing_is_not_marked_lost(monkeypatch, store, config):
    run_id = store.create_run(config, status="running")
    time.sleep(0.3)
    _stale_listing(monkeypatch, store, run_id)  # listed silent for 0.3 s
    store.heartbeat(run_id)  # then it beats

    assert mark_lost_runs(store, 0.2) == []
    assert store.get_run(run_id).status == "running"


def test_a_run_that_ended_after_the_listing_keeps_its_outcome(monkeypatch, store, config):
    run_id = store.create_run(config, status="running")
    time.sleep(0.3)
    _stale_listing(monkeypatch, store, run_id)
    store.set_status(run_id, "finished")

    assert mark_lost_runs(store, 0.2) == []
    assert store.get_run(run_id).status == "finished"


def test_a_bad_limit_is_rejected(store):
    with pytest.raises(ValueError, match="max_age_s"):
        mark_lost_runs(store, float("nan"))
