"""The graceful stop of ``spherescope up``: running runs end ``cancelled``, never ``lost``.

A worker's pool process that receives SIGTERM dies in the middle of a step: its run is
then recorded ``lost`` with no final checkpoint. So on the first Ctrl-C / SIGTERM the
stack (1) asks every run its workers train to stop, through the store's cancel flag with
the reason "stopped: the stack was shut down" (the training loop polls the flag, writes
its final checkpoint, flushes its data and ends ``cancelled`` "... at step N"), (2) sends
SIGTERM to each worker's *main* process only (Celery's warm shutdown: it takes no new
message and waits for its running tasks), and (3) keeps cancelling any run a worker
still started meanwhile, until the workers exit or the grace period ends.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import time
from collections.abc import Callable, Sequence

from db.store import RunStore
from worker.processes import ChildProcess

STOP_REASON = "stopped: the stack was shut down"
GRACE_S = 10.0  # a cancelled run ends at its next step; this bounds a very slow step
# An idle worker ends its warm shutdown within ~1 s; one that lost its broker never does
# (Celery keeps reconnecting), and it has no run to save: it is not waited for longer.
IDLE_GRACE_S = 3.0
POLL_S = 0.1


def runs_of_workers(store: RunStore, worker_pids: set[int]) -> list[str]:
    """Runs marked ``running`` by a pool process of one of these workers: same host, and
    the training process (``extra.pid``) is in a worker's process group."""
    host = socket.gethostname()
    found = []
    for record in store.list_runs(status="running"):
        pid = record.extra.get("pid")
        if record.host != host or not isinstance(pid, int):
            continue
        try:
            if os.getpgid(pid) in worker_pids:
                found.append(record.run_id)
        except ProcessLookupError:
            continue
    return found


def stop_workers_gracefully(
    store: RunStore,
    workers: Sequence[ChildProcess],
    forced: Callable[[], bool],
    grace_s: float = GRACE_S,
) -> list[str]:
    """Cancel the workers' runs, warm-stop the workers, wait up to ``grace_s`` seconds
    (less if ``forced()`` turns true, at most ``IDLE_GRACE_S`` while none of them trains);
    return the ids of the runs it cancelled. Workers still alive afterwards are left to
    the caller (``processes.stop_all``; ``workers_idle`` says whether they may go at once)."""
    pids = {worker.pid for worker in workers if worker.poll() is None}
    cancelled: list[str] = []
    started = time.monotonic()
    warm_stop_sent = False
    while pids and not forced() and time.monotonic() < started + grace_s:
        running = runs_of_workers(store, pids)
        for run_id in running:
            if run_id not in cancelled:
                with contextlib.suppress(FileNotFoundError, ValueError):
                    store.request_cancel(run_id, reason=STOP_REASON)
                cancelled.append(run_id)
        if not warm_stop_sent:
            for worker in workers:
                if worker.poll() is None:
                    # the main process only: pool children must finish their step
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(worker.pid, signal.SIGTERM)
            warm_stop_sent = True
        elif not running and time.monotonic() > started + IDLE_GRACE_S:
            break
        pids = {worker.pid for worker in workers if worker.poll() is None}
        time.sleep(POLL_S)
    return cancelled


def workers_idle(store: RunStore, workers: Sequence[ChildProcess]) -> bool:
    """Whether none of the live workers trains a run (they may then be killed at once)."""
    return not runs_of_workers(store, {w.pid for w in workers if w.poll() is None})
