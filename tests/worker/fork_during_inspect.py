"""Run by test_reconcile: fork pool-like processes (billiard, as the worker's prefork
pool does) while the reconcile pass waits for inspect replies; print the pids of the
children that are still alive 10 s later (each should exit at once)."""

from __future__ import annotations

import os
import signal
import threading
import time

import billiard

from worker.celery_app import app
from worker.reconcile import worker_task_ids


def _nothing() -> None:
    pass


def main() -> None:
    inspecting = threading.Thread(target=worker_task_ids, args=(app,), kwargs={"timeout_s": 2.0})
    inspecting.start()
    children = []
    for _ in range(6):
        time.sleep(0.25)
        child = billiard.get_context("fork").Process(target=_nothing)
        child.start()
        children.append(child)
    deadline = time.monotonic() + 10
    for child in children:
        child.join(timeout=max(0.0, deadline - time.monotonic()))
    hung = [child.pid for child in children if child.is_alive()]
    for child in children:
        if child.is_alive():
            os.kill(child.pid, signal.SIGKILL)
    print(f"hung: {hung}", flush=True)
    inspecting.join()


if __name__ == "__main__":
    main()
