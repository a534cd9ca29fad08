"""How many devices a worker offers a run, how it says so, and what a launch checks.

A worker's devices are the CUDA devices it sees when it serves the gpu queue, else its
CPU cores (a multi-device CPU run is that many gloo processes); ``SPHERESCOPE_WORKER_DEVICES``
overrides the count. Every live worker keeps ``spherescope:devices:<node name>`` = count
in Redis with a short expiry (refreshed by its reaper thread, like the gpu key of
``worker.routing``). A launch asking for more ``training.devices`` than the largest live
worker has is refused, naming that worker; with no worker alive the run is queued, and
a worker that takes a run it has too few devices for sends it back to the queue with the
reason in its status message (``worker.execution``).
"""

from __future__ import annotations

import os

import redis

from db.store import RunStore
from worker import settings
from worker.processes import count_gpus


def local_devices(serves_gpu: bool) -> int:
    """This worker's device count (``serves_gpu``: it consumes the gpu queue)."""
    override = settings.worker_devices_override()
    if override is not None:
        return override
    if serves_gpu:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        if visible is not None:
            return len([part for part in visible.split(",") if part.strip()])
        return count_gpus()
    return len(os.sched_getaffinity(0))


def advertise_devices(client: redis.Redis, node_name: str, devices: int, ttl_s: float) -> None:
    client.set(f"{settings.DEVICES_KEY}:{node_name}", str(devices), px=int(ttl_s * 1000))


def live_worker_devices(client: redis.Redis) -> dict[str, int]:
    """Node name → device count of every live worker."""
    prefix = f"{settings.DEVICES_KEY}:"
    found = {}
    for key in client.scan_iter(match=f"{prefix}*", count=100):
        value = client.get(key)
        if value is not None:
            found[key.decode()[len(prefix) :]] = int(value)
    return found


def check_devices_available(devices: int, live: dict[str, int]) -> None:
    """``ValueError`` naming the largest live worker when none has ``devices`` devices;
    nothing when no worker is alive (the run waits in the queue for one)."""
    if devices == 1 or not live:
        return
    largest = max(live, key=lambda node: live[node])
    if live[largest] < devices:
        raise ValueError(
            f"training.devices: {devices} is more than any live worker has "
            f"(the largest, {largest}, has {live[largest]})"
        )


def waiting_message(devices: int, node_name: str, available: int) -> str:
    """The status message of a run sent back to the queue by a worker too small for it."""
    return (
        f"waiting for a worker with {devices} devices ({node_name}, which took it, has {available})"
    )


def too_few_devices(store: RunStore, run_id: str, node_name: str, serves_gpu: bool) -> bool:
    """Whether this worker must send queued run ``run_id`` back to the queue because it
    has fewer devices than the run's ``training.devices``; if so, the run's status
    message says what it waits for. A cancelled or no longer queued run is the
    lifecycle's to skip (False)."""
    record = store.get_run(run_id)
    needed = int(record.config.get("training", {}).get("devices", 1))
    if needed == 1 or record.status != "queued" or store.cancel_requested(run_id):
        return False
    available = local_devices(serves_gpu)
    if available >= needed:
        return False
    store.note_queued(run_id, waiting_message(needed, node_name, available))
    return True
