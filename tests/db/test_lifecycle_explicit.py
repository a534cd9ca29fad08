"""RunLifecycle without a block (start/finish, as the SDK uses it), heartbeat_store and
reopen_tracker."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from db import queries
from db.lifecycle import RunLifecycle
from db.store import RunStore


@pytest.fixture()
def store(tmp_path: Path) -> RunStore:
    return RunStore(tmp_path / "home")


class _Beats:
    def __init__(self, store: RunStore) -> None:
        self.store, self.calls = store, 0

    def heartbeat(self, run_id: str, step: int | None = None, total: int | None = None) -> None:
        self.calls += 1
        self.store.heartbeat(run_id, 41, None)


def test_start_and_finish_are_entering_and_leaving(store: RunStore) -> None:
    run_id = store.create_run({}, "explicit", kind="external", status="running")
    beats = _Beats(store)
    lifecycle = RunLifecycle(
        store, run_id, heartbeat_s=0.05, accept_running=True, heartbeat_store=beats
    ).start()
    lifecycle.tracker.track_many({"a": 1.0}, 1)
    time.sleep(0.3)
    assert store.get_run(run_id).progress_step == 41 and beats.calls >= 2
    lifecycle.end("finished", "", write_failures=0)
    lifecycle.finish()
    record = store.get_run(run_id)
    assert (record.status, lifecycle.status) == ("finished", "finished")
    calls = beats.calls
    time.sleep(0.2)
    assert beats.calls == calls  # the heartbeat stopped


def test_finish_with_an_error_records_it(store: RunStore) -> None:
    run_id = store.create_run({}, "crash", kind="external", status="running")
    lifecycle = RunLifecycle(store, run_id, heartbeat_s=0.05, accept_running=True).start()
    lifecycle.finish(ZeroDivisionError("division by zero"))
    record = store.get_run(run_id)
    assert record.status == "failed"
    assert record.status_message == "ZeroDivisionError: division by zero"


def test_reopen_tracker_discards_the_buffer(store: RunStore) -> None:
    run_id = store.create_run({}, "reopen", kind="external", status="running")
    lifecycle = RunLifecycle(store, run_id, heartbeat_s=0.05, accept_running=True).start()
    lifecycle.tracker.track_many({"a": 1.0, "b": 2.0}, 1)
    old = lifecycle.tracker
    fresh = lifecycle.reopen_tracker()
    assert fresh is lifecycle.tracker and fresh is not old and fresh.buffered_rows() == 0
    lifecycle.finish()
    assert queries.metric_names(store, run_id) == []
