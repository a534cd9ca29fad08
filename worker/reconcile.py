"""Queued runs the broker lost are enqueued again.

The private Redis keeps nothing on disk, so a broker restart (or a crash) drops every
waiting message: their runs would stay ``queued`` forever. Each worker's main process
reconciles when it is ready and then every ``SPHERESCOPE_RECONCILE_S`` seconds: a run
that is ``queued`` in the store, whose status has not changed for
``SPHERESCOPE_REQUEUE_AFTER_S`` seconds, and that the broker does not hold (not in a
queue list, not delivered-unacknowledged, not active or reserved on any worker that
answers) is sent again with ``task_id = run_id`` on the queue its device asks for.

Sending a run twice is harmless: the store's claim (``RunStore.start_run``, an
``O_EXCL`` file) lets exactly one task train it; the others find it running or ended
and do nothing. So a worker that answers the inspection late costs a spare message,
never a second training. The hooks that start and stop it are in ``worker.celery_hooks``.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterable
from typing import Any

import kombu
import redis
from celery import Celery

from db import layout
from db.store import RunStore
from sphere_engine.config import RunConfig
from worker import routing, settings
from worker.periodic import PeriodicThread

log = logging.getLogger(__name__)

TASK_NAME = "spherescope.train_run"
PRIORITY_SEPARATOR = "\x06\x16"  # kombu's Redis transport: "<queue>\x06\x16<priority>"
PRIORITY_STEPS = (0, 3, 6, 9)
UNACKED_KEY = "unacked"  # kombu's hash of delivered, not yet acknowledged messages


def requeue_after() -> float:
    """A queued run is resent only after its status stood still this many seconds (a
    launch records the run just before it enqueues it)."""
    return float(os.environ.get("SPHERESCOPE_REQUEUE_AFTER_S") or 60.0)


def reconcile_interval() -> float:
    return float(os.environ.get("SPHERESCOPE_RECONCILE_S") or 30.0)


def _task_id(raw: bytes) -> str | None:
    try:
        message = json.loads(raw)
        if isinstance(message, list):  # unacked entries are [message, exchange, key]
            message = message[0]
        return str(message["headers"]["id"])
    except (ValueError, KeyError, TypeError, IndexError):
        return None


def broker_task_ids(client: redis.Redis, queues: Iterable[str] = settings.QUEUES) -> set[str]:
    """Task ids of the messages Redis holds: waiting in ``queues`` or delivered and not
    yet acknowledged."""
    raws: list[bytes] = []
    for queue in queues:
        for step in PRIORITY_STEPS:
            key = f"{queue}{PRIORITY_SEPARATOR}{step}" if step else queue
            raws.extend(client.lrange(key, 0, -1))
    raws.extend(client.hvals(UNACKED_KEY))
    return {task_id for task_id in map(_task_id, raws) if task_id}


def worker_task_ids(
    app: Celery, timeout_s: float = 1.0, connection: kombu.Connection | None = None
) -> set[str]:
    """Ids of the tasks the workers that answer hold (active or reserved)."""
    if connection is None:
        with app.connection_for_write() as own:
            return worker_task_ids(app, timeout_s, own)
    inspect = app.control.inspect(timeout=timeout_s, connection=connection)
    ids: set[str] = set()
    for reply in (inspect.active(), inspect.reserved()):
        for tasks in (reply or {}).values():
            ids.update(str(task.get("id")) for task in tasks)
    return ids


def _queue_of(config: dict[str, Any], client: redis.Redis) -> str:
    try:
        return routing.queue_for(RunConfig.from_dict(config), client)
    except ValueError:  # the task fails it and records why; any queue will do
        return settings.CPU_QUEUE


def reconcile(app: Celery, store: RunStore, grace_s: float | None = None) -> list[str]:
    """Send again the queued runs the broker no longer holds; their ids."""
    grace_s = requeue_after() if grace_s is None else grace_s
    now = time.time()
    candidates = []
    for record in store.list_runs(status="queued"):
        if record.executor:  # submitted to a scheduler (SLURM), not to the broker
            continue
        try:
            still_since = (store.run_dir(record.run_id) / layout.STATUS).stat().st_mtime
        except FileNotFoundError:  # deleted meanwhile
            continue
        if now - still_since >= grace_s:
            candidates.append(record)
    if not candidates:
        return []
    # A broker connection of this pass only, never one from the app's pool: the worker
    # forks a pool process after every run, and a child closes the pool it inherited,
    # reading a BRPOP reply still pending on a pooled connection from the socket it
    # shares with this process. It then hung until the broker connection dropped (30-90
    # s) and a reply it swallowed was lost. A connection outside any pool is only
    # disconnected in the child, which redis-py does without touching the parent's socket.
    with (
        routing.redis_client(app.conf.broker_url) as client,
        app.connection_for_write() as connection,
    ):
        held = broker_task_ids(client) | worker_task_ids(app, connection=connection)
        resent = []
        for record in candidates:
            if record.run_id in held or store.get_run(record.run_id).status != "queued":
                continue
            queue = _queue_of(record.config, client)
            app.send_task(
                TASK_NAME,
                (record.run_id,),
                task_id=record.run_id,
                queue=queue,
                connection=connection,
            )
            log.warning(
                "run %s was queued but the broker no longer held it: enqueued again on %s",
                record.run_id,
                queue,
            )
            resent.append(record.run_id)
        return resent


def reconcile_thread(app: Celery, interval: float) -> PeriodicThread:
    """Calls ``reconcile`` at once and then every ``interval`` seconds until stopped."""
    return PeriodicThread("spherescope-reconcile", interval, lambda: reconcile(app, RunStore()))
