"""Settings of the execution layer, read from the environment when asked for.

``REDIS_URL`` is the Celery broker; ``SPHERESCOPE_HOME`` is the run store's root
(read by ``db.store.RunStore``). Everything else has a default that suits a laptop and
can be overridden for a cluster or for tests.
"""

from __future__ import annotations

import os

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"

CPU_QUEUE = "cpu"
GPU_QUEUE = "gpu"
QUEUES = (GPU_QUEUE, CPU_QUEUE)

# Redis key a worker serving the gpu queue refreshes while it lives (routing of `auto`).
GPU_ALIVE_KEY = "spherescope:alive:gpu"


def _float_env(name: str, default: float) -> float:
    raw = os.environ.get(name, "")
    try:
        return float(raw) if raw else default
    except ValueError:
        raise ValueError(f"{name}: {raw!r} is not a number") from None


def redis_url() -> str:
    return os.environ.get("REDIS_URL", "") or DEFAULT_REDIS_URL


def heartbeat_interval() -> float:
    """Seconds between heartbeats written by a running task."""
    return _float_env("SPHERESCOPE_HEARTBEAT_S", 2.0)


def lost_after() -> float:
    """A running run whose heartbeat is older than this many seconds is `lost`."""
    return _float_env("SPHERESCOPE_LOST_AFTER_S", 15.0)


def reaper_interval() -> float:
    """Seconds between two passes of a worker's reaper thread."""
    return _float_env("SPHERESCOPE_REAPER_S", 5.0)


def task_time_limit() -> float:
    """Hard wall-clock limit of one training task (default two days)."""
    return _float_env("SPHERESCOPE_TASK_TIME_LIMIT_S", 2 * 24 * 3600.0)
