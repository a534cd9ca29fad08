"""The graceful stop's parts: which runs belong to a stack's workers; the cancel reason."""

from __future__ import annotations

import os
import socket
import sys
import time

from worker_fixtures import config, wait_for

from worker.processes import ChildProcess, stop_all
from worker.shutdown import (
    STOP_REASON,
    runs_of_workers,
    stop_workers_gracefully,
    workers_idle,
)


def test_runs_of_workers_are_those_trained_in_their_process_groups(store, tmp_path) -> None:
    # a "worker" whose child (same process group) stands for its pool process
    pid_file = tmp_path / "pool-child"
    script = (
        "import subprocess, sys, time; "
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); "
        f"open({str(pid_file)!r}, 'w').write(str(p.pid)); time.sleep(600)"
    )
    worker = ChildProcess("fake worker", [sys.executable, "-c", script], dict(os.environ))
    host = socket.gethostname()
    run_ids = []
    try:
        wait_for(lambda: pid_file.exists() and pid_file.read_text(), 30, "the pool child")
        pool_child = int(pid_file.read_text())
        owners = [(host, pool_child), ("another-host", pool_child), (host, os.getpid())]
        for run_host, pid in owners:
            run_ids.append(store.create_run(config(), status="running"))
            store.set_status(run_ids[-1], "running", host=run_host, pid=pid)

        found = runs_of_workers(store, {worker.pid})
        assert [run_id in found for run_id in run_ids] == [True, False, False]
    finally:
        stop_all([worker], grace_s=5)
        for run_id in run_ids:
            store.set_status(run_id, "cancelled")


def test_the_cancel_reason_goes_through_the_store(store) -> None:
    run_id = store.create_run(config(), status="running")
    assert store.cancel_reason(run_id) == ""
    store.request_cancel(run_id, reason=STOP_REASON)
    assert store.cancel_requested(run_id)
    assert store.cancel_reason(run_id) == "stopped: the stack was shut down"


def test_an_idle_worker_that_ignores_its_warm_stop_is_not_waited_for(store, tmp_path) -> None:
    """A Celery worker that lost its broker keeps reconnecting and never ends its warm
    shutdown; with no run to save, the stop goes on after IDLE_GRACE_S, not GRACE_S."""
    ready = tmp_path / "deaf"
    script = (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        f"open({str(ready)!r}, 'w').close(); time.sleep(600)"
    )
    worker = ChildProcess("deaf worker", [sys.executable, "-c", script], dict(os.environ))
    try:
        wait_for(ready.exists, 30, "the worker to ignore SIGTERM")
        started = time.monotonic()
        assert stop_workers_gracefully(store, [worker], lambda: False, grace_s=60) == []
        assert time.monotonic() - started < 30  # IDLE_GRACE_S (3 s), not the 60 s grace
        assert worker.poll() is None and workers_idle(store, [worker])
    finally:
        stop_all([worker], grace_s=1)
    assert worker.poll() is not None
