"""The train_run task: the status check, the final statuses, and recorded failures."""

from __future__ import annotations

import re

import pytest
from billiard.exceptions import WorkerLostError
from worker_fixtures import config, wait_for, wait_status

from db import queries
from db.lifecycle import throttled
from worker import launch
from worker.execution import execute_run
from worker.failures import failure_message, record_failure
from worker.tasks import train_run

# From tests/sphere_engine/test_train.py: SGD with lr 1e8 blows a linear head up.
DIVERGING = config(
    steps=50,
    objective={"kind": "head", "name": "linear"},
    data={"split": "standard", "batch_size": 40, "samples_per_class": 4},
    optimizer={"name": "sgd", "lr": 1e8, "momentum": 0.0},
)


def test_a_diverging_run_ends_failed_with_the_error_message_stored(store, worker) -> None:
    run_id = launch(DIVERGING)

    record = wait_status(store, run_id, {"finished", "failed", "lost"}, 120)

    assert record.status == "failed"
    assert re.search(
        r"loss became (nan|inf) at step \d+; last finite values \(step \d+\)", record.status_message
    ), record.status_message
    assert record.finished_at is not None
    # what was logged before the divergence is kept
    steps = queries.metric_series(store, [run_id], ["loss/total"], max_points=10_000)["step"]
    assert len(steps) >= 1


def test_a_task_for_a_run_that_is_not_queued_does_nothing(store, worker) -> None:
    run_id = launch(config(steps=20))
    first = wait_status(store, run_id, {"finished", "failed"}, 120)
    assert first.status == "finished"
    offset = len(worker.log_text())

    train_run.apply_async((run_id,), task_id=f"{run_id}-again", queue="cpu")

    wait_for(
        # the first task may log its own "succeeded" after the status turned finished
        lambda: f"train_run[{run_id}-again] succeeded" in worker.log_text(offset),
        120,
        "the second delivery to be handled",
    )
    assert f"run {run_id} is finished, not queued" in worker.log_text(offset)
    again = store.get_run(run_id)
    assert (again.status, again.started_at, again.finished_at) == (
        "finished",
        first.started_at,
        first.finished_at,
    )


def test_execute_run_in_process_trains_and_sets_the_final_status(store) -> None:
    run_id = store.create_run(config(steps=12))

    assert execute_run(store, run_id) == "finished"

    record = store.get_run(run_id)
    assert (record.status, record.progress_step, record.device) == ("finished", 12, "cpu")
    assert record.started_at is not None and record.started_at <= record.finished_at
    checkpoints = queries.checkpoints(store, run_id)
    assert list(checkpoints["step"]) == [12]
    assert checkpoints["path"].iloc[0].startswith(str(store.checkpoint_dir(run_id)))


@pytest.mark.parametrize("status", ["running", "finished", "failed", "cancelled", "lost"])
def test_execute_run_skips_a_run_that_is_not_queued(store, status) -> None:
    run_id = store.create_run(config(steps=12), status=status)
    before = store.get_run(run_id)

    assert execute_run(store, run_id) == status

    after = store.get_run(run_id)
    assert (after.status, after.started_at, after.progress_step) == (
        status,
        before.started_at,
        None,
    )


def test_execute_run_honours_a_cancel_requested_before_the_start(store) -> None:
    run_id = store.create_run(config(steps=12))
    store.request_cancel(run_id)

    assert execute_run(store, run_id) == "cancelled"
    record = store.get_run(run_id)
    assert (record.status, record.status_message) == ("cancelled", "cancelled before it started")
    assert record.progress_step is None


def test_record_failure_marks_failed_or_lost_but_keeps_a_real_outcome(store) -> None:
    crashed, died, done = (store.create_run(config(), status="running") for _ in range(3))
    store.set_status(done, "finished")

    record_failure(store, crashed, RuntimeError("boom"))
    record_failure(store, died, WorkerLostError("signal 9 (SIGKILL)"))
    record_failure(store, done, RuntimeError("late"))

    assert (store.get_run(crashed).status, store.get_run(crashed).status_message) == (
        "failed",
        "RuntimeError: boom",
    )
    assert store.get_run(died).status == "lost"
    assert "signal 9" in store.get_run(died).status_message
    assert store.get_run(done).status == "finished"


def test_failure_messages_keep_validation_errors_as_they_are() -> None:
    assert failure_message(ValueError("training.device: no CUDA")) == "training.device: no CUDA"
    assert failure_message(KeyError("x")) == "KeyError: 'x'"


def test_throttled_check_calls_at_most_once_per_interval_and_latches() -> None:
    answers = iter([False, True])
    calls = []

    def check() -> bool:
        calls.append(1)
        return next(answers)

    stop = throttled(check, interval=3600.0)
    assert [stop(), stop(), stop()] == [False, False, False]
    assert len(calls) == 1
    stop = throttled(check, interval=0.0)
    assert [stop(), stop()] == [True, True]
    assert len(calls) == 2
