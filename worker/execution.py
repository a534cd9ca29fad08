"""What a worker does with one run id: the library code behind ``tasks.train_run``.

The store is the truth about a run. A task starts training only for a run that is
still ``queued`` (a redelivered or re-sent message for a run that is running, finished,
lost or cancelled does nothing), and it writes the final status itself; a failure is
recorded by the task's base class.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable

from db.store import RunStore
from sphere_engine.config import RunConfig
from worker import settings
from worker.heartbeat import Heartbeat

log = logging.getLogger(__name__)

CANCEL_POLL_S = 0.25  # the store's cancel flag is read at most this often


def throttled(check: Callable[[], bool], interval: float) -> Callable[[], bool]:
    """``check`` evaluated at most every ``interval`` seconds; True once stays True."""
    state = {"at": float("-inf"), "value": False}

    def wrapped() -> bool:
        now = time.monotonic()
        if not state["value"] and now - state["at"] >= interval:
            state["at"], state["value"] = now, bool(check())
        return bool(state["value"])

    return wrapped


def run_config_for(store: RunStore, run_id: str, data: dict) -> RunConfig:
    """The run's config; checkpoints go to the run's folder unless the config says where."""
    config = RunConfig.from_dict(data)
    if not config.training.checkpoint_dir:
        config.training.checkpoint_dir = str(store.checkpoint_dir(run_id))
    return config


def execute_run(store: RunStore, run_id: str) -> str:
    """Train run ``run_id`` if it is still queued; return the status it ended with."""
    from sphere_engine.train import run_training  # imported in the child (warm), never the parent

    record = store.get_run(run_id)
    if record.status != "queued":
        log.warning("run %s is %s, not queued: not running it again", run_id, record.status)
        return record.status
    if store.cancel_requested(run_id):
        store.set_status(run_id, "cancelled", "cancelled before it started")
        return "cancelled"
    config = run_config_for(store, run_id, record.config)
    store.set_status(run_id, "running", host=socket.gethostname(), pid=os.getpid())

    should_stop = throttled(lambda: store.cancel_requested(run_id), CANCEL_POLL_S)
    with Heartbeat(store, run_id, settings.heartbeat_interval()):
        result = run_training(config, store.tracker(run_id), should_stop)

    if result.cancelled:
        store.end_run(
            run_id,
            "cancelled",
            f"{store.cancel_reason(run_id) or 'cancelled'} at step {result.steps_completed}",
            device=result.device,
        )
        return "cancelled"
    store.end_run(run_id, "finished", device=result.device)
    return "finished"
