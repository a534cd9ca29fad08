"""Queue routing by training.device, and the GPU workers' presence keys."""

from __future__ import annotations

import time

import pytest

from sphere_engine.config import RunConfig
from worker import routing


@pytest.fixture
def client(redis_server):
    client = routing.redis_client(redis_server.url)
    yield client
    for key in client.scan_iter(match="spherescope:alive:gpu:*"):
        client.delete(key)


def run_config(device: str) -> RunConfig:
    return RunConfig.from_dict({"training": {"device": device}})


def test_explicit_devices_choose_their_queue(client) -> None:
    assert routing.queue_for(run_config("cuda"), client) == "gpu"
    assert routing.queue_for(run_config("cpu"), client) == "cpu"


def test_auto_goes_to_gpu_only_while_a_gpu_worker_advertises_itself(client) -> None:
    assert routing.queue_for(run_config("auto"), client) == "cpu"
    routing.advertise_gpu_worker(client, "gpu0@box", ttl_s=0.3)
    assert routing.queue_for(run_config("auto"), client) == "gpu"
    time.sleep(0.5)  # the key expires when the worker stops refreshing it
    assert routing.queue_for(run_config("auto"), client) == "cpu"
    routing.advertise_gpu_worker(client, "gpu1@box", ttl_s=60)
    routing.withdraw_gpu_worker(client, "gpu1@box")
    assert not routing.gpu_worker_alive(client)
