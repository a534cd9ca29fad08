"""worker/celery_hooks.py holds every Celery hook, and the app a worker starts loads it."""

from __future__ import annotations

import contextlib
from pathlib import Path

from celery import signals
from worker_fixtures import WorkerProcess, wait_for

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
        signals.worker_init: {"preload_parent"},
        signals.worker_process_init: {"warm_imports"},
        signals.worker_ready: {"start_reaper", "start_reconciling"},
        signals.worker_shutdown: {"stop_reaper", "stop_reconciling"},
        signals.task_failure: {"record_lost_child"},
    }
    for signal, names in expected.items():
        connected = {n for n in _connected(signal) if n.startswith("worker.")}
        assert connected == {f"worker.celery_hooks.{name}" for name in names}, signal.name
    assert hooks.require_broker.__module__ == "worker.celery_hooks"


def _mapped(pid: int) -> str:
    return (Path("/proc") / str(pid) / "maps").read_text()


def _warm_children(pid: int) -> int:
    """How many pool children of ``pid`` have torch loaded (a retiring one may vanish)."""
    warm = 0
    for child in _children(pid):
        with contextlib.suppress(FileNotFoundError):
            warm += "libtorch" in _mapped(child)
    return warm


def _children(pid: int) -> list[int]:
    tasks = Path("/proc") / str(pid) / "task"
    found = []
    for task in tasks.iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def test_the_main_process_holds_the_torch_free_libraries_and_never_torch(
    worker: WorkerProcess,
) -> None:
    """A child inherits scikit-learn and SciPy from its parent (it imports only torch and
    the engine itself), and the parent never loads torch: CUDA can never be initialised
    before a fork."""
    assert worker.process is not None
    main = worker.process.pid
    # the worker is shared: a run of another test may have just retired a child, whose
    # replacement is still forking or importing
    wait_for(lambda: _warm_children(main) == worker.concurrency, 300, "every child warm")
    parent = _mapped(main)
    assert "sklearn" in parent and "scipy" in parent
    assert "libtorch" not in parent and "/torch/" not in parent
