"""A broker restart does not orphan queued runs: a worker that starts
against the restarted Redis enqueues them again, and the run trains exactly once."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from stack_fixtures import use_broker
from worker_fixtures import REPO, WorkerProcess, config, wait_for, wait_status

from db import queries
from db.store import RunStore
from worker import launch
from worker.celery_app import app
from worker.reconcile import broker_task_ids, reconcile
from worker.redis_server import PrivateRedis


@pytest.fixture
def own_redis(monkeypatch: pytest.MonkeyPatch) -> Iterator[PrivateRedis]:
    """A private Redis of this test only; ``app`` and ``REDIS_URL`` point at it."""
    server = PrivateRedis().start()
    monkeypatch.setenv("REDIS_URL", server.url)
    try:
        with use_broker(server.url):
            yield server
    finally:
        server.close()


def test_a_run_queued_before_a_broker_restart_finishes_exactly_once(
    own_redis, tmp_path: Path, monkeypatch
) -> None:
    store = RunStore(tmp_path / "home")
    run_id = launch(config(steps=25), store=store)
    client = redis.Redis.from_url(own_redis.url)
    assert broker_task_ids(client) == {run_id}  # waiting in the cpu queue
    client.close()

    own_redis.stop()
    own_redis.start()
    client = redis.Redis.from_url(own_redis.url)
    # A broker that lost its data (the private Redis may keep it on disk across restarts,
    # depending on when it last saved): the message is gone for certain.
    client.flushdb()
    assert broker_task_ids(client) == set()
    assert store.get_run(run_id).status == "queued"

    monkeypatch.setenv("SPHERESCOPE_REQUEUE_AFTER_S", "1")
    monkeypatch.setenv("SPHERESCOPE_RECONCILE_S", "1")
    worker = WorkerProcess(own_redis.url, store.home, tmp_path / "worker.log").start()
    try:
        record = wait_status(store, run_id, {"finished", "failed", "lost"}, timeout_s=120)
        assert record.status == "finished", record.status_message
        # Later passes find it ended and send nothing more; it ran once.
        done = f"spherescope.train_run[{run_id}] succeeded"
        wait_for(lambda: done in worker.log_text(), 30, "the task to return")
        assert reconcile(app, store, grace_s=0) == []
        log = worker.log_text()
        assert log.count(f"run {run_id} was queued but the broker no longer held it") == 1
        assert log.count(done) == 1 and log.count(f"train_run[{run_id}] received") == 1
        steps = queries.metric_series(store, [run_id], ["loss/total"], max_points=1000)["step"]
        assert sorted(steps) == list(range(1, 26))
    finally:
        worker.stop()
        client.close()


def test_reconcile_leaves_runs_the_broker_holds_and_fresh_ones_alone(
    own_redis, tmp_path: Path
) -> None:
    store = RunStore(tmp_path / "home")
    held = launch(config(steps=5), store=store)  # in the queue list (no worker consumes)
    assert reconcile(app, store, grace_s=0) == []
    orphan = store.create_run(config(steps=5))  # recorded, never enqueued
    assert reconcile(app, store, grace_s=3600) == []  # too fresh: a launch in progress
    assert reconcile(app, store, grace_s=0) == [orphan]
    client = redis.Redis.from_url(own_redis.url)
    assert broker_task_ids(client) == {held, orphan}
    assert reconcile(app, store, grace_s=0) == []  # now held: not sent twice
    client.close()


def test_a_pool_process_forked_while_the_reconcile_pass_waits_for_replies_starts_at_once(
    own_redis,
) -> None:
    """The worker forks a pool process after every run; its reconcile thread may be
    waiting for inspect replies at that moment. A child that inherited that connection
    used to read the pending reply from the socket it shares with the parent while it
    closed the inherited pool: it hung until the parent dropped the connection (32–93 s
    in the suite), and a task reply it swallowed was lost. The scenario runs in a
    process of its own, so that a hang fails this test instead of stalling the suite."""
    script = Path(__file__).with_name("fork_during_inspect.py")
    env = dict(os.environ, REDIS_URL=own_redis.url, PYTHONPATH=str(REPO))
    try:
        done = subprocess.run(
            [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=60
        )
    except subprocess.TimeoutExpired as expired:
        raise AssertionError(f"the parent hung after the forks: {expired.stdout!r}") from None
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "hung: []", done.stdout
