"""How a failed task is written into the run store (status + a message a person can act on).

Errors raised inside a run are recorded by ``db.lifecycle.RunLifecycle`` (the same for
the worker and the CLI); this module adds what only Celery knows: a pool process that
died, and the task time limits.
"""

from __future__ import annotations

import logging

from billiard.exceptions import TimeLimitExceeded, WorkerLostError
from celery.exceptions import SoftTimeLimitExceeded

from db import lifecycle
from db.store import RunStore
from worker.distributed_run import RankFailedError

log = logging.getLogger(__name__)

KEEP = frozenset({"finished", "cancelled", "failed"})  # outcomes a late failure must not hide


def failure_message(exc: BaseException) -> str:
    if isinstance(exc, WorkerLostError):
        return (
            f"the worker process died while training ({exc}); "
            "killed by the system (out of memory?) or by hand"
        )
    if isinstance(exc, RankFailedError):
        return str(exc)  # names the rank and its error
    if isinstance(exc, (SoftTimeLimitExceeded, TimeLimitExceeded)):
        return f"the run exceeded the task time limit ({exc}); see SPHERESCOPE_TASK_TIME_LIMIT_S"
    return lifecycle.failure_message(exc)


def record_failure(store: RunStore, run_id: str, exc: BaseException) -> None:
    """Mark ``run_id`` failed (``lost`` if its process died) unless it already ended."""
    try:
        record = store.get_run(run_id)
        if record.status in KEEP:
            return
        status = "lost" if isinstance(exc, WorkerLostError) else "failed"
        store.set_status(run_id, status, failure_message(exc))
    except Exception:  # the failure handler must never raise over the original error
        log.exception("could not record the failure of run %s", run_id)
