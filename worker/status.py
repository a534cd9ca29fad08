"""``spherescope status``: queue lengths, live workers, and one pass of the reaper."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

import redis

from db.store import RunStore
from worker import routing, settings
from worker.reaper import reap_lost
from worker.redis_server import masked
from worker.settings import BrokerNotConfigured


@dataclass
class ClusterStatus:
    broker: str
    broker_error: str = ""
    queue_lengths: dict[str, int] = field(default_factory=dict)
    workers: dict[str, list[str]] = field(default_factory=dict)  # node name → active run ids
    worker_queues: dict[str, list[str]] = field(default_factory=dict)
    reaped: list[str] = field(default_factory=list)
    running: list[str] = field(default_factory=list)
    queued: list[str] = field(default_factory=list)


def queue_lengths(client: redis.Redis) -> dict[str, int]:
    """Messages waiting in each queue (kombu keeps a queue as a Redis list of its name)."""
    return {queue: int(client.llen(queue)) for queue in settings.QUEUES}


def broker_url() -> str:
    """``worker.celery_app.broker_url()``, without importing Celery until a broker
    answers (its app's broker is the configured URL until a process sets another)."""
    if "worker.celery_app" in sys.modules:
        return sys.modules["worker.celery_app"].broker_url()
    return settings.redis_url()


def live_workers(timeout_s: float) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(node → active task ids, node → consumed queues) of the workers that answered."""
    from worker.celery_app import app  # Celery: only once the broker answered

    inspect = app.control.inspect(timeout=timeout_s)
    active: dict[str, Any] = inspect.active() or {}
    queues: dict[str, Any] = inspect.active_queues() or {}
    nodes = set(active) | set(queues)
    return (
        {node: [task["id"] for task in active.get(node) or []] for node in nodes},
        {node: [queue["name"] for queue in queues.get(node) or []] for node in nodes},
    )


def collect_status(store: RunStore, timeout_s: float = 1.0) -> ClusterStatus:
    url = broker_url()
    status = ClusterStatus(broker=masked(url))
    status.reaped = reap_lost(store)
    try:
        status.queue_lengths = queue_lengths(routing.redis_client(url))
        status.workers, status.worker_queues = live_workers(timeout_s)
    except (redis.RedisError, OSError) as error:
        status.broker_error = str(error)
    status.running = [r.run_id for r in store.list_runs(status="running")]
    status.queued = [r.run_id for r in store.list_runs(status="queued")]
    return status


def format_status(status: ClusterStatus, store: RunStore) -> str:
    lines = [f"broker     {status.broker}", f"run store  {store.home}"]
    if status.broker_error:
        lines.append(f"broker unreachable: {status.broker_error}")
    else:
        lines.append(
            "queues     " + ", ".join(f"{q}: {n} waiting" for q, n in status.queue_lengths.items())
        )
        if not status.workers:
            lines.append("workers    none answered (start one with `spherescope worker`)")
        for node in sorted(status.workers):
            active = status.workers[node]
            queues = ",".join(status.worker_queues.get(node, []))
            lines.append(
                f"worker     {node} [{queues}] "
                + (f"running {', '.join(active)}" if active else "idle")
            )
    lines.append(f"runs       {len(status.running)} running, {len(status.queued)} queued")
    for run_id in status.reaped:
        lines.append(f"marked lost (no heartbeat): {run_id}")
    return "\n".join(lines)


def status_command(timeout_s: float) -> int:
    """``spherescope status``: the report, or one line when no broker is configured."""
    try:
        broker_url()
    except BrokerNotConfigured as error:
        print(f"spherescope status: {error}", file=sys.stderr)
        return 2
    store = RunStore()
    print(format_status(collect_status(store, timeout_s), store))
    return 0
