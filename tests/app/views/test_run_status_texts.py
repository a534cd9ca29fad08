"""What the Run and Runs pages say about a run, by its status and kind: no "a queued run
starts when a worker is free" for a failed run or a finished analysis, and a queued cuda
run says that no live worker serves the gpu queue."""

from __future__ import annotations

import pytest
from app_fixtures import config, open_page, texts

from app import data
from app.data.status_texts import ANALYSIS_TEXT, NO_GPU_WORKER_TEXT, NO_METRICS_TEXT
from worker import routing
from worker.celery_app import app as celery_app
from worker.redis_server import PrivateRedis

WORKER_FREE = "starts when a worker"


def test_failed_run_says_it_failed_not_that_it_waits(filled):
    app = open_page("views/run.py", {"run_id": filled.failed})
    assert not app.exception
    infos = texts(app.info)
    assert NO_METRICS_TEXT["failed"] in infos
    assert not any(WORKER_FREE in text for text in infos)


def test_finished_analysis_is_complete_and_explained(filled):
    app = open_page("views/run.py", {"run_id": filled.analysis})
    assert not app.exception
    infos = texts(app.info)
    assert ANALYSIS_TEXT["finished"] in infos
    assert not any(WORKER_FREE in text for text in infos)
    (bar,) = app.get("progress")
    assert bar.proto.value == 100


def test_runs_table_shows_a_finished_analysis_complete_and_no_none_cells(filled):
    app = open_page("views/runs.py")
    table = app.dataframe[0].value.set_index("run_id")
    assert table.loc[filled.analysis, "progress"] == 1.0
    assert app.dataframe[0].proto.placeholder == "–"


@pytest.fixture
def private_broker(monkeypatch):
    """A private Redis as this process's broker (never the one on 127.0.0.1:6379)."""
    with PrivateRedis() as server:
        monkeypatch.setenv("REDIS_URL", server.url)
        old = celery_app.conf.broker_url
        celery_app.conf.broker_url = server.url
        try:
            yield routing.redis_client(server.url)
        finally:
            celery_app.conf.broker_url = old


def test_queued_cuda_run_says_no_live_worker_serves_its_queue(store, private_broker):
    queued = store.create_run(
        {**config(), "training": {**config()["training"], "device": "cuda"}}, "waits for a gpu"
    )
    app = open_page("views/run.py", {"run_id": queued})
    assert NO_GPU_WORKER_TEXT in texts(app.info)
    runs = open_page("views/runs.py")
    table = runs.dataframe[0].value.set_index("run_id")
    assert table.loc[queued, "message"] == NO_GPU_WORKER_TEXT

    routing.advertise_gpu_worker(private_broker, "gpu0@test", ttl_s=60)
    data.gpu_worker_alive.clear()
    app = open_page("views/run.py", {"run_id": queued})
    assert NO_METRICS_TEXT["queued"] in texts(app.info)
    assert NO_GPU_WORKER_TEXT not in texts(app.info)
