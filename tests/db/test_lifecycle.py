"""``db.lifecycle.RunLifecycle``: claim, heartbeat, tracker, end with compaction and the
recording of errors, on a real store (no engine, no worker)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from db import layout
from db.lifecycle import RunLifecycle, RunNotStartable, failure_message
from db.schema import TABLES
from sphere_engine.errors import TrainingDivergedError


def _chunks(store, run_id) -> list[str]:
    return [
        path.name
        for table in TABLES
        for path in layout.scan_table(store.table_dir(run_id, table)).live
        if layout.CHUNK_PATTERN.match(path.name)
    ]


def test_a_run_is_claimed_beats_logs_and_ends_finished_and_compacted(store, config):
    run_id = store.create_run(config)
    with RunLifecycle(store, run_id, heartbeat_s=0.05) as run:
        running = store.get_run(run_id)
        assert (running.status, running.extra["pid"] > 0, running.host != "") == (
            "running",
            True,
            True,
        )
        for step in range(3):
            run.tracker.track(float(step), "loss/total", step)
            run.tracker.flush()  # three chunks
        first_beat = store.get_run(run_id).heartbeat_at
        time.sleep(0.3)  # nothing flushes: only the heartbeat thread writes
        assert store.get_run(run_id).heartbeat_at > first_beat
        assert run.checkpoint_dir.is_dir()

    record = store.get_run(run_id)
    assert (record.status, record.status_message, run.status) == ("finished", "", "finished")
    assert _chunks(store, run_id) == []  # compacted at the end
    assert len(store.live_files("scalars", [run_id])) == 1
    beat = store.get_run(run_id).heartbeat_at
    time.sleep(0.2)
    assert store.get_run(run_id).heartbeat_at == beat  # the thread stopped


def test_the_outcome_set_by_the_body_is_written_with_its_fields(store, config):
    run_id = store.create_run(config)
    with RunLifecycle(store, run_id) as run:
        run.end("cancelled", "cancelled at step 7", device="cpu")
    record = store.get_run(run_id)
    assert (record.status, record.status_message, record.device) == (
        "cancelled",
        "cancelled at step 7",
        "cpu",
    )
    with pytest.raises(ValueError, match="'running' is not a terminal status"):
        run.end("running")


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (TrainingDivergedError("training diverged: the loss became nan at step 3"), None),
        (ValueError("data.root: '/nope' does not exist"), None),
        (RuntimeError("boom"), "RuntimeError: boom"),
    ],
)
def test_an_error_in_the_body_is_recorded_failed_kept_and_re_raised(store, config, error, message):
    run_id = store.create_run(config)
    with pytest.raises(type(error)), RunLifecycle(store, run_id) as run:
        run.tracker.track(1.0, "loss/total", 1)  # buffered, not flushed yet
        raise error
    record = store.get_run(run_id)
    assert (record.status, record.status_message) == ("failed", message or str(error))
    assert record.finished_at is not None
    assert _chunks(store, run_id) == [] and len(store.live_files("scalars", [run_id])) == 1


def test_keyboard_interrupt_is_recorded_cancelled(store, config):
    run_id = store.create_run(config, status="running")
    with pytest.raises(KeyboardInterrupt), RunLifecycle(store, run_id, accept_running=True):
        raise KeyboardInterrupt
    record = store.get_run(run_id)
    assert (record.status, record.status_message) == ("cancelled", "interrupted from the keyboard")


def test_a_custom_failure_description_is_used(store, config):
    run_id = store.create_run(config)
    with pytest.raises(OSError), RunLifecycle(store, run_id, describe_failure=lambda e: "disk"):
        raise OSError("no space")
    assert store.get_run(run_id).status_message == "disk"


@pytest.mark.parametrize("status", ["running", "finished", "failed", "cancelled", "lost"])
def test_only_a_queued_run_is_claimed_by_default(store, config, status):
    run_id = store.create_run(config, status=status)
    before = store.get_run(run_id)
    expected = pytest.raises(RunNotStartable, match=f"is {status}, not queued")
    with expected as caught, RunLifecycle(store, run_id):
        pytest.fail("the body must not run")
    assert caught.value.status == status
    assert store.get_run(run_id) == before


def test_a_run_created_running_by_this_process_is_accepted_when_asked(store, config):
    run_id = store.create_run(config, status="running")
    with RunLifecycle(store, run_id, accept_running=True):
        pass
    assert store.get_run(run_id).status == "finished"
    with pytest.raises(RunNotStartable):  # finished stays finished
        RunLifecycle(store, run_id, accept_running=True).__enter__()


def test_a_cancel_before_the_start_ends_the_run_without_running_the_body(store, config):
    run_id = store.create_run(config)
    store.request_cancel(run_id)
    with pytest.raises(RunNotStartable) as caught, RunLifecycle(store, run_id):
        pytest.fail("the body must not run")
    assert caught.value.status == "cancelled"
    record = store.get_run(run_id)
    assert (record.status, record.status_message) == ("cancelled", "cancelled before it started")


def test_should_stop_follows_the_cancel_flag(store, config):
    run_id = store.create_run(config)
    with RunLifecycle(store, run_id) as run:
        assert not run.should_stop()
        store.request_cancel(run_id)
        deadline = time.monotonic() + 5
        while not run.should_stop() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert run.should_stop()


def test_failure_messages_match_by_type():
    assert failure_message(TrainingDivergedError("diverged at step 3")) == "diverged at step 3"
    assert failure_message(ValueError("training.steps: must be > 0")) == (
        "training.steps: must be > 0"
    )
    assert failure_message(KeyError("x")) == "KeyError: 'x'"

    class TrainingDivergedErrorLookalike(RuntimeError):  # matched by type, not by name
        pass

    TrainingDivergedErrorLookalike.__name__ = "TrainingDivergedError"
    assert failure_message(TrainingDivergedErrorLookalike("x")) == "TrainingDivergedError: x"


def test_the_lifecycle_and_the_errors_module_import_no_torch():
    code = "import db.lifecycle, db.store, sys; print('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "False", result.stderr


def test_a_claimed_run_whose_tracker_cannot_open_is_recorded_failed(store, config, monkeypatch):
    run_id = store.create_run(config)

    def broken_tracker(*args: object, **kwargs: object) -> None:
        raise OSError("read-only file system")

    monkeypatch.setattr(store, "tracker", broken_tracker)
    with pytest.raises(OSError), RunLifecycle(store, run_id):
        pytest.fail("the body must not run")
    record = store.get_run(run_id)
    assert (record.status, record.status_message) == ("failed", "OSError: read-only file system")
