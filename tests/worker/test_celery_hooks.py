"""worker/celery_hooks.py holds every Celery hook, and the app a worker starts loads it."""

from __future__ import annotations

from celery import signals

import worker.celery_hooks as hooks
from worker.celery_app import app


def _connected(signal: signals.Signal) -> set[str]:
    names = set()
    for _, receiver in signal.receivers:
        function = (
            receiver() if callable(receiver) and not hasattr(receiver, "__name__") else receiver
        )
        names.add(f"{function.__module__}.{function.__name__}")
    return names


def test_every_hook_is_connected_from_one_module() -> None:
    assert "worker.celery_hooks" in app.conf.include
    expected = {
        signals.celeryd_init: {"require_broker"},
        signals.worker_process_init: {"warm_imports"},
        signals.worker_ready: {"start_reaper", "start_reconciling"},
        signals.worker_shutdown: {"stop_reaper", "stop_reconciling"},
        signals.task_failure: {"record_lost_child"},
    }
    for signal, names in expected.items():
        connected = {n for n in _connected(signal) if n.startswith("worker.")}
        assert connected == {f"worker.celery_hooks.{name}" for name in names}, signal.name
    assert hooks.require_broker.__module__ == "worker.celery_hooks"
