"""Celery tasks: thin wrappers that take a run id and call the library."""

from __future__ import annotations

from typing import Any

from celery import Task

from db.store import RunStore
from worker import settings
from worker.celery_app import app
from worker.devices import too_few_devices
from worker.execution import execute_run
from worker.failures import record_failure

DEVICE_RETRY_S = 10.0  # a run sent back for want of devices is offered again this much later


class RunTask(Task):
    """Base task: an exception raised while running a run is recorded in the store."""

    def on_failure(
        self, exc: BaseException, task_id: str, args: tuple, kwargs: dict, einfo: Any
    ) -> None:
        run_id = args[0] if args else kwargs.get("run_id", task_id)
        record_failure(RunStore(), run_id, exc)


@app.task(base=RunTask, name="spherescope.train_run", bind=True)
def train_run(self: Task, run_id: str) -> str:
    """Train the queued run ``run_id``; returns the status it ended with. A run needing
    more devices than this worker has goes back to its queue (``worker.devices``)."""
    store = RunStore()
    queue = (self.request.delivery_info or {}).get("routing_key") or settings.CPU_QUEUE
    if too_few_devices(store, run_id, self.request.hostname, queue == settings.GPU_QUEUE):
        self.apply_async((run_id,), task_id=run_id, queue=queue, countdown=DEVICE_RETRY_S)
        return "queued"
    return execute_run(store, run_id)


@app.task(name="spherescope.concatenated_evaluation")
def concatenated_evaluation(study_id: str, arm: str, repro: int, run_ids: list[str]) -> None:
    """A study reproduction's concatenated evaluation (``worker.study.concatenated``),
    here because a pool process has torch imported already; it writes its result file,
    or its error, in the study's folder."""
    from worker.study.concatenated import evaluate_and_keep

    store = RunStore()
    evaluate_and_keep(store.home, study_id, arm, repro, run_ids, store)
