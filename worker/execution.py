"""What a worker does with one run id: the library code behind ``tasks.train_run``.

The store is the truth about a run. A task starts training only for a run that is
still ``queued`` (a redelivered or re-sent message for a run that is running, finished,
lost or cancelled does nothing). Status, heartbeat, tracker, end of run and failure
recording are ``db.lifecycle.RunLifecycle``'s, the same as for ``spherescope train``.
"""

from __future__ import annotations

import logging

from db import run_log
from db.heartbeat import heartbeat_interval
from db.lifecycle import RunLifecycle, RunNotStartable
from db.store import RunStore
from sphere_engine.config import RunConfig
from worker.failures import failure_message
from worker.train_in_run import train_in_run

log = logging.getLogger(__name__)


def execute_run(store: RunStore, run_id: str) -> str:
    """Train run ``run_id`` if it is still queued; return the status it ended with."""
    lifecycle = RunLifecycle(
        store, run_id, heartbeat_s=heartbeat_interval(), describe_failure=failure_message
    )
    try:
        with lifecycle as run, run_log.capture(store.run_dir(run_id)):
            # validated when it was submitted; the stored dict is that config
            config = RunConfig.from_dict(store.get_run(run_id).config)
            train_in_run(run, config)  # torch is imported here, in the child, never the parent
    except RunNotStartable as skipped:
        if skipped.status != "cancelled":
            log.warning("%s", skipped)
        return skipped.status
    return lifecycle.status
