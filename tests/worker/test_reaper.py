"""Lost runs: the reaper's rule, and a worker killed with SIGKILL in the middle of a run."""

from __future__ import annotations

import time
from datetime import timedelta
from unittest import mock

from worker_fixtures import WorkerProcess, config, wait_for, wait_status

from db import queries
from db.heartbeat import heartbeat_interval
from worker import launch
from worker.reaper import reap_lost
from worker.settings import lost_after


def test_only_running_runs_with_a_stale_heartbeat_are_marked_lost(store) -> None:
    stale, fresh, queued = (store.create_run(config()) for _ in range(3))
    for run_id in (stale, fresh):
        store.set_status(run_id, "running")
    store.heartbeat(stale, step=3, total=30)
    time.sleep(1.0)
    store.heartbeat(fresh, step=4, total=30)
    now = store.get_run(fresh).heartbeat_at + timedelta(seconds=20)

    assert reap_lost(store, max_age_s=10_000, now=now) == []
    assert reap_lost(store, max_age_s=20.5, now=now) == [stale]  # stale: 21 s, fresh: 20 s

    record = store.get_run(stale)
    assert record.status == "lost"
    assert record.status_message.startswith("no heartbeat for 21 s")
    assert [store.get_run(r).status for r in (fresh, queued)] == ["running", "queued"]


def test_a_killed_worker_leaves_a_lost_run_that_is_never_run_again(store, worker) -> None:
    run_id = launch(config(steps=1_000_000))
    wait_for(lambda: (store.get_run(run_id).progress_step or 0) >= 5, 120, "training steps")
    time.sleep(1.5)  # at least one more flush of the store tracker

    before_kill = len(queries.metric_series(store, [run_id], ["loss/total"], max_points=10**7))
    worker.kill()
    killed_at = time.monotonic()
    running = store.get_run(run_id)
    assert running.status == "running"

    offset = len(worker.log.read_bytes())
    restarted: WorkerProcess = worker.start()  # its reaper finds the silent run
    record = wait_status(store, run_id, {"lost", "finished", "failed", "cancelled"}, 40)
    elapsed = time.monotonic() - killed_at

    assert record.status == "lost"
    assert elapsed <= 30.0, f"marked lost after {elapsed:.1f} s"
    # not before the heartbeat limit: the last heartbeat came up to one interval before
    # the kill, so the run may be marked that much less than lost_after() after it
    assert lost_after() - heartbeat_interval() < elapsed
    assert record.status_message.startswith("no heartbeat for")
    silent_s = int(record.status_message.removeprefix("no heartbeat for").split()[0])
    assert silent_s >= int(lost_after())
    kept = queries.metric_series(store, [run_id], ["loss/total"], max_points=10**7)
    assert len(kept) >= before_kill >= 5
    assert sorted(kept["step"]) == list(range(1, len(kept) + 1))

    next_run = launch(config(steps=20))
    assert wait_status(store, next_run, {"finished", "failed", "lost"}, 120).status == "finished"
    after = store.get_run(run_id)
    assert (after.status, after.started_at, after.progress_step) == (
        "lost",
        running.started_at,
        record.progress_step,
    )
    assert len(queries.metric_series(store, [run_id], ["loss/total"], max_points=10**7)) == len(
        kept
    )
    assert f"run {run_id} marked lost" in restarted.log_text(offset)
    assert f"train_run[{run_id}] received" not in restarted.log_text(offset)


def test_a_workers_reaper_never_rewrites_a_damaged_status(store, worker) -> None:
    """The reaper thread of a real worker marks a silent run lost but
    leaves a run whose status.json is damaged as it is (shown ``unknown``)."""
    damaged, silent = (store.create_run(config(), status="running") for _ in range(2))
    # both silent for longer than the limit already: the reaper's next pass judges them
    long_ago = time.time() - lost_after() - 60
    with mock.patch("db.run_status.time.time", return_value=long_ago):
        for run_id in (damaged, silent):
            store.heartbeat(run_id, step=3, total=30)
    status_file = store.run_dir(damaged) / "status.json"
    status_file.write_text('{"status": "runn')
    # the reaper ran (33 s after the run was made, once, on a loaded 2-core machine)
    wait_status(store, silent, {"lost"}, timeout_s=120)
    time.sleep(6)  # and again (every 5 s)
    assert status_file.read_text() == '{"status": "runn'
    record = store.get_run(damaged)
    assert record.status == "unknown" and "last heartbeat at step 3" in record.status_message
