"""Every Celery hook of the worker, in one place (Celery signals).

- starting a worker without a broker: stop at once with the one-line reason;
- main process, when ready: a reaper thread (lost runs) that also advertises the
  worker's device count in Redis (``worker.devices``) and the gpu queue when this
  worker consumes it (for routing ``device = auto``), and the reconcile thread that
  re-sends queued runs the broker lost (``worker.reconcile``);
- main process, before its pool forks: import the torch-free libraries a run needs
  (scikit-learn, SciPy, pandas, SymPy), once, so that every child inherits them;
- each pool child, when forked: import torch and the engine before any task arrives
  (importing torch does not initialise CUDA; the first CUDA call happens in the task);
- main process: failures the child cannot report (its death, the hard time limit).

The Celery app includes this module, so every worker connects them.
"""

from __future__ import annotations

import importlib
import logging
import os
import time
from typing import Any

from billiard.exceptions import TimeLimitExceeded, WorkerLostError
from celery import signals

from db.store import RunStore
from worker import devices, routing, settings
from worker.celery_app import broker_url
from worker.failures import record_failure
from worker.periodic import PeriodicThread
from worker.reaper import reaper_thread
from worker.reconcile import reconcile_interval, reconcile_thread

log = logging.getLogger(__name__)
_reaper: PeriodicThread | None = None
_reconciler: PeriodicThread | None = None


@signals.celeryd_init.connect
def require_broker(**_: Any) -> None:
    """A worker started without a broker stops at once with the one-line reason."""
    try:
        broker_url()
    except settings.BrokerNotConfigured as error:
        raise SystemExit(f"spherescope worker: {error}") from None


#: Torch-free modules the run path imports (``sphere_engine.data.digits`` and
#: ``metrics.clustering``: scikit-learn, which brings SciPy and pandas; torch.fx: SymPy).
#: Imported once in the main process, they cost a child nothing: without them a child
#: spent about 40 % of its warm-up here, and a child replaced when a short run ended was
#: still importing when the next run arrived. None of them imports torch (a test checks).
PARENT_MODULES = ("sklearn.datasets", "sklearn.cluster", "sympy")

WARM_MODULES = (
    "sphere_engine.train",
    "sphere_engine.data",
    "sphere_engine.models",
    "sphere_engine.metrics",
    "sphere_engine.evaluation",
    "db.tracker",
)


@signals.worker_init.connect
def preload_parent(**_: Any) -> None:
    started = time.perf_counter()
    for module in PARENT_MODULES:
        try:
            importlib.import_module(module)
        except ImportError:  # the child imports what it needs (and reports a failure)
            log.warning("preload of %s failed in the worker's main process", module)
    log.info("torch-free libraries imported in %.1f s", time.perf_counter() - started)


@signals.worker_process_init.connect
def warm_imports(**_: Any) -> None:
    started = time.perf_counter()
    try:
        for module in WARM_MODULES:
            importlib.import_module(module)
    except Exception:  # the task will report the same error with its run
        log.exception("warm import of the engine failed")
        return
    log.info(
        "pool process %d warm (engine imported in %.1f s)",
        os.getpid(),
        time.perf_counter() - started,
    )


def _consumed_queues(consumer: Any) -> set[str]:
    task_consumer = getattr(consumer, "task_consumer", None)
    return {queue.name for queue in getattr(task_consumer, "queues", [])}


@signals.worker_ready.connect
def start_reaper(sender: Any = None, **_: Any) -> None:
    global _reaper
    node_name = getattr(sender, "hostname", "worker")
    serves_gpu = settings.GPU_QUEUE in _consumed_queues(sender)
    client = routing.redis_client(sender.app.conf.broker_url)
    ttl = 3 * settings.reaper_interval()
    device_count = devices.local_devices(serves_gpu)
    log.info("worker %s offers %d device(s) to a run", node_name, device_count)

    def also() -> None:
        devices.advertise_devices(client, node_name, device_count, ttl)
        if serves_gpu:
            routing.advertise_gpu_worker(client, node_name, ttl)

    _reaper = reaper_thread(settings.reaper_interval(), also)
    _reaper.start()


@signals.worker_shutdown.connect
def stop_reaper(**_: Any) -> None:
    if _reaper is not None:
        _reaper.stop()


@signals.task_failure.connect
def record_lost_child(
    task_id: str | None = None,
    exception: BaseException | None = None,
    args: tuple | None = None,
    **_: Any,
) -> None:
    # Exceptions raised inside the task are recorded by RunTask.on_failure in the child;
    # these two only ever reach the main process.
    if isinstance(exception, (WorkerLostError, TimeLimitExceeded)):
        run_id = args[0] if args else task_id
        record_failure(RunStore(), run_id, exception)


@signals.worker_ready.connect
def start_reconciling(sender: Any = None, **_: Any) -> None:
    global _reconciler
    _reconciler = reconcile_thread(sender.app, reconcile_interval())
    _reconciler.start()


@signals.worker_shutdown.connect
def stop_reconciling(**_: Any) -> None:
    if _reconciler is not None:
        _reconciler.stop()
