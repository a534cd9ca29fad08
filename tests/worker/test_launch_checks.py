"""What the dashboard asks the launcher before launching: a sweep's every combination
checked without recording anything, and whether a live worker serves the gpu queue."""

from __future__ import annotations

import pytest

import worker
from db.store import RunStore
from worker import routing


def test_check_sweep_names_the_invalid_combination_and_records_nothing(store: RunStore):
    before = len(store.list_runs())
    with pytest.raises(ValueError, match=r"^sweep combination optimizer.lr=-1 seed=0: optimizer"):
        worker.check_sweep({}, {"optimizer.lr": [0.01, -1]}, [0])
    checked = worker.check_sweep({}, {"optimizer.lr": [0.01, 0.1]}, [0, 1])
    assert [label for _, label in checked] == [
        "optimizer.lr=0.01 seed=0",
        "optimizer.lr=0.01 seed=1",
        "optimizer.lr=0.1 seed=0",
        "optimizer.lr=0.1 seed=1",
    ]
    assert len(store.list_runs()) == before


def test_gpu_worker_alive_follows_the_liveness_keys(redis_server):
    client = routing.redis_client(redis_server.url)
    assert worker.gpu_worker_alive() is False
    routing.advertise_gpu_worker(client, "gpu9@test", ttl_s=60)
    try:
        assert worker.gpu_worker_alive() is True
    finally:
        routing.withdraw_gpu_worker(client, "gpu9@test")
    assert worker.gpu_worker_alive() is False


def test_gpu_worker_alive_is_unknown_without_a_broker(monkeypatch):
    from worker.celery_app import app

    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv("SPHERESCOPE_HOME", "/nonexistent-spherescope-home")
    monkeypatch.setattr(app.conf, "broker_url", None)
    assert worker.gpu_worker_alive() is None
