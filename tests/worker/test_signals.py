"""worker/signals.py holds every Celery hook, and the app a worker starts loads it."""

from __future__ import annotations

from celery import signals

import worker.signals as hooks
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
    assert "worker.signals" in app.conf.include
    expected = {
        signals.celeryd_init: {"worker.signals.require_broker"},
        signals.worker_process_init: {"worker.signals.warm_imports"},
        signals.worker_ready: {"worker.signals.start_reaper", "worker.signals.start_reconciling"},
        signals.worker_shutdown: {"worker.signals.stop_reaper", "worker.signals.stop_reconciling"},
        signals.task_failure: {"worker.signals.record_lost_child"},
    }
    for signal, names in expected.items():
        connected = {n for n in _connected(signal) if n.startswith("worker.")}
        assert connected == names, signal.name
    assert hooks.require_broker.__module__ == "worker.signals"
