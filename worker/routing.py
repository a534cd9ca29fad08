"""Which queue a run goes to, and how GPU workers make themselves known.

``training.device``: ``cuda`` → queue ``gpu``; ``cpu`` → queue ``cpu``; ``auto`` → ``gpu``
when a live worker serves the gpu queue, else ``cpu``. A worker serving ``gpu`` keeps
a key ``spherescope:alive:gpu:<node name>`` in Redis with a short expiry (refreshed by
its reaper thread), so routing needs one Redis scan rather than a broadcast round trip.
A ``cuda`` run with no GPU worker waits in the gpu queue until one starts.
"""

from __future__ import annotations

import redis

from sphere_engine.config import RunConfig
from worker import settings


def redis_client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)


def gpu_worker_alive(client: redis.Redis) -> bool:
    return any(True for _ in client.scan_iter(match=f"{settings.GPU_ALIVE_KEY}:*", count=100))


def advertise_gpu_worker(client: redis.Redis, node_name: str, ttl_s: float) -> None:
    client.set(f"{settings.GPU_ALIVE_KEY}:{node_name}", "1", px=int(ttl_s * 1000))


def withdraw_gpu_worker(client: redis.Redis, node_name: str) -> None:
    client.delete(f"{settings.GPU_ALIVE_KEY}:{node_name}")


def queue_for(config: RunConfig, client: redis.Redis) -> str:
    device = config.training.device
    if device == "cuda":
        return settings.GPU_QUEUE
    if device == "cpu":
        return settings.CPU_QUEUE
    return settings.GPU_QUEUE if gpu_worker_alive(client) else settings.CPU_QUEUE
