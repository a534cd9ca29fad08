"""Broker resilience: a Redis restart in the middle of a run neither hangs nor re-runs it."""

from __future__ import annotations

import time

from worker_fixtures import config, wait_for, wait_status

from worker import launch
from worker.celery_app import app

ENDED = {"finished", "failed", "lost", "cancelled"}


def test_settings_suit_long_runs() -> None:
    conf = app.conf
    assert (conf.task_acks_late, conf.worker_prefetch_multiplier) == (False, 1)
    assert (conf.worker_disable_prefetch, conf.worker_max_tasks_per_child) == (True, 1)
    assert conf.task_serializer == "json" and conf.accept_content == ["json"]
    assert conf.task_soft_time_limit < conf.task_time_limit


def test_a_redis_restart_mid_run_ends_the_run_cleanly_and_the_worker_recovers(
    store, worker, redis_server
) -> None:
    run_id = launch(config(steps=3000))
    wait_for(lambda: (store.get_run(run_id).progress_step or 0) >= 5, 120, "training steps")

    redis_server.stop()
    time.sleep(2.0)
    redis_server.start()
    during = store.get_run(run_id)
    assert during.status == "running" and during.progress_step < 3000  # restarted mid-run

    record = wait_status(store, run_id, ENDED, 180)
    assert record.status in {"finished", "failed"}
    if record.status == "failed":
        assert record.status_message
    else:
        assert record.progress_step == 3000

    # the worker reconnected: a run launched after the restart executes normally
    after = launch(config(steps=20))
    assert wait_status(store, after, ENDED, 120).status == "finished"
    assert store.get_run(run_id).status == record.status  # not run a second time
