"""Celery tasks: thin wrappers that take a run id and call the library."""

from __future__ import annotations

from typing import Any

from celery import Task

from db.store import RunStore
from worker.celery_app import app
from worker.execution import execute_run
from worker.failures import record_failure


class RunTask(Task):
    """Base task: an exception raised while running a run is recorded in the store."""

    def on_failure(
        self, exc: BaseException, task_id: str, args: tuple, kwargs: dict, einfo: Any
    ) -> None:
        run_id = args[0] if args else kwargs.get("run_id", task_id)
        record_failure(RunStore(), run_id, exc)


@app.task(base=RunTask, name="spherescope.train_run")
def train_run(run_id: str) -> str:
    """Train the queued run ``run_id``; returns the status it ended with."""
    return execute_run(RunStore(), run_id)
