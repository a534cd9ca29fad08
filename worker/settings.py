"""Settings of the execution layer, read from the environment when asked for.

``REDIS_URL`` is the Celery broker; ``SPHERESCOPE_HOME`` is the run store's root
(read by ``db.store.RunStore``). There is no default broker: without ``REDIS_URL`` a
process uses the private Redis of the ``spherescope up`` that runs on this store (its
URL is in ``<home>/stack/redis-url``, readable by this user only), and anything that
needs a broker fails with one line saying what to do (a silent default would queue
runs into whatever Redis listens there, where they never run). Everything else has a
default that suits a laptop and can be overridden.
"""

from __future__ import annotations

import os
from pathlib import Path

from db.layout import resolve_home

REDIS_URL_MISSING = "REDIS_URL is not set: start the stack with `spherescope up` or set REDIS_URL"

CPU_QUEUE = "cpu"
GPU_QUEUE = "gpu"
QUEUES = (GPU_QUEUE, CPU_QUEUE)

# Redis key a worker serving the gpu queue refreshes while it lives (routing of `auto`).
GPU_ALIVE_KEY = "spherescope:alive:gpu"
# Redis key (``<key>:<node name>`` = device count) every live worker refreshes (worker.devices).
DEVICES_KEY = "spherescope:devices"
# Overrides the devices a worker counts (GPUs it sees, else CPU cores).
DEVICES_ENV = "SPHERESCOPE_WORKER_DEVICES"


def _float_env(name: str, default: float) -> float:
    raw = os.environ.get(name, "")
    try:
        return float(raw) if raw else default
    except ValueError:
        raise ValueError(f"{name}: {raw!r} is not a number") from None


class BrokerNotConfigured(ValueError):
    """No ``REDIS_URL`` and no running ``spherescope up`` on this store."""

    def __init__(self) -> None:
        super().__init__(REDIS_URL_MISSING)


def stack_url_file(home: str | os.PathLike[str] | None = None) -> Path:
    """Where ``spherescope up`` writes the URL (with password) of its private Redis."""
    return resolve_home(home) / "stack" / "redis-url"


def configured_redis_url() -> str:
    """``REDIS_URL``, else the URL the running ``spherescope up`` wrote, else ``""``."""
    url = os.environ.get("REDIS_URL", "").strip()
    if url:
        return url
    try:
        return stack_url_file().read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def redis_url() -> str:
    """The broker URL; ``BrokerNotConfigured`` (one line) when there is none."""
    url = configured_redis_url()
    if not url:
        raise BrokerNotConfigured()
    return url


def worker_devices_override() -> int | None:
    """``SPHERESCOPE_WORKER_DEVICES`` as a count ≥ 1, None when unset."""
    raw = os.environ.get(DEVICES_ENV, "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{DEVICES_ENV}: {raw!r} is not a device count (an integer >= 1)")
    return int(raw)


def lost_after() -> float:
    """A running run whose heartbeat is older than this many seconds is `lost`."""
    return _float_env("SPHERESCOPE_LOST_AFTER_S", 15.0)


def reaper_interval() -> float:
    """Seconds between two passes of a worker's reaper thread."""
    return _float_env("SPHERESCOPE_REAPER_S", 5.0)


def task_time_limit() -> float:
    """Hard wall-clock limit of one training task (default two days)."""
    return _float_env("SPHERESCOPE_TASK_TIME_LIMIT_S", 2 * 24 * 3600.0)
