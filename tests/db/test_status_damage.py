"""A damaged ``status.json`` is shown as such, rebuilt where the run's other files allow,
and never rewritten on a guess."""

from __future__ import annotations

import time

import pytest

from db import layout
from db.lifecycle import RunLifecycle, RunNotStartable
from db.lost_runs import mark_lost_runs
from db.store import RunStore


def _damage(store, run_id) -> None:
    (store.run_dir(run_id) / layout.STATUS).write_text('{"status": "fini')


def test_a_finished_run_with_a_damaged_status_is_rebuilt_from_its_end_marker(store, config):
    run_id = store.create_run(config)
    with RunLifecycle(store, run_id, heartbeat_s=0.05) as run:
        run.tracker.track(1.0, "loss/total", 1)
    _damage(store, run_id)
    record = store.get_run(run_id)
    assert (record.status, record.finished_at is not None) == ("finished", True)
    assert "status.json: not valid JSON" in record.extra["status_unreadable"]
    assert any("status.json" in problem for problem in store.problems())
    # Not running: the reaper leaves it alone, and it cannot be started or blamed.
    assert mark_lost_runs(store, 0.0) == []
    with pytest.raises(ValueError, match="cannot change status from 'finished' to 'lost'"):
        store.set_status(run_id, "lost", "guess")
    assert (store.run_dir(run_id) / layout.STATUS).read_text() == '{"status": "fini'


def test_a_running_run_with_a_damaged_status_is_unknown_not_lost(store, config):
    run_id = store.create_run(config, status="running")
    store.heartbeat(run_id, step=7, total=100)
    _damage(store, run_id)
    record = store.get_run(run_id)
    assert record.status == "unknown"
    assert record.status_message.startswith(f"status unreadable: {store.run_dir(run_id)}/status")
    assert "last heartbeat at step 7" in record.status_message
    assert record.progress_step == 7  # the rest of the record is still read
    assert [r.run_id for r in store.list_runs(status="unknown")] == [run_id]
    time.sleep(0.05)
    assert mark_lost_runs(store, 0.0) == []  # the reaper no longer overwrites it with lost
    for guess in ("lost", "running"):
        with pytest.raises(ValueError, match=f"from 'unknown' to '{guess}'"):
            store.set_status(run_id, guess)
    assert (store.run_dir(run_id) / layout.STATUS).read_text() == '{"status": "fini'
    # The tracker's write-error note does not rewrite it either.
    store.note_write_error(run_id, "disk full")
    assert (store.run_dir(run_id) / layout.STATUS).read_text() == '{"status": "fini'


def test_the_process_running_it_may_still_end_it_and_the_damaged_file_is_kept(store, config):
    run_id = store.create_run(config)
    with RunLifecycle(store, run_id, heartbeat_s=0.05) as run:
        run.tracker.track(1.0, "loss/total", 1)
        _damage(store, run_id)  # damaged while it runs
        assert store.get_run(run_id).status == "unknown"
    record = store.get_run(run_id)
    assert record.status == "finished" and "status_unreadable" not in record.extra
    kept = list(store.run_dir(run_id).glob("status.json.corrupt-*"))
    assert [path.read_text() for path in kept] == ['{"status": "fini']


def test_a_queued_run_with_a_damaged_status_is_not_started_until_rerun(store, config):
    run_id = store.create_run(config)
    _damage(store, run_id)
    with pytest.raises(RunNotStartable, match="unknown, not queued"), RunLifecycle(store, run_id):
        pass
    store.set_status(run_id, "queued")  # a rerun
    with RunLifecycle(store, run_id):
        pass
    assert store.get_run(run_id).status == "finished"


def test_a_damaged_status_is_logged_once_per_process_not_once_per_store(
    store, config, caplog
) -> None:
    """The worker's reaper builds a store per pass (every 5 s) and the dashboard one per
    page: a status that stays damaged must be one warning, not one per pass. Each
    store still lists the problem."""
    run_id = store.create_run(config, status="running")
    _damage(store, run_id)
    with caplog.at_level("WARNING", logger="db.file_catalogue"):
        for _ in range(3):
            fresh = RunStore(store.home)
            assert mark_lost_runs(fresh, 3600.0) == []
            assert any("status.json" in problem for problem in fresh.problems())
    warnings = [r.getMessage() for r in caplog.records if "status.json" in r.getMessage()]
    assert len(warnings) == 1, warnings
