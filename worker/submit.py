"""Launching and cancelling runs: what the dashboard and the CLI call.

A launch validates the config, records the run as ``queued`` in the store, then
enqueues ``train_run`` with ``task_id = run_id`` on the queue its device asks for.
Invalid configs raise ``ValueError`` before anything is recorded or enqueued.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import redis

from db.run_index import check_project
from db.scheduler_record import SLURM
from db.store import RunStore
from sphere_engine.config import RunConfig
from sphere_engine.validation import validated_config
from worker import devices, routing
from worker.celery_app import broker_url
from worker.checkpoint_policy import check_checkpoint_dir
from worker.settings import BrokerNotConfigured
from worker.sweep import expand_grid
from worker.tasks import train_run

log = logging.getLogger(__name__)


def check_devices(config: RunConfig) -> None:
    """``ValueError`` when ``training.devices`` is more than any live worker has
    (``worker.devices``); a broker that cannot be asked is left to the enqueue to report."""
    if config.training.devices == 1:
        return
    try:
        live = devices.live_worker_devices(routing.redis_client(broker_url()))
    except (redis.RedisError, OSError):
        return
    devices.check_devices_available(config.training.devices, live)


def _enqueue(store: RunStore, run_id: str, config: RunConfig) -> None:
    try:
        queue = routing.queue_for(config, routing.redis_client(broker_url()))
        train_run.apply_async((run_id,), task_id=run_id, queue=queue)
    except Exception as error:
        store.set_status(run_id, "failed", f"could not enqueue the run: {error}")
        raise
    log.info("run %s queued on %s", run_id, queue)


@dataclass(frozen=True)
class _PlannedRun:
    """A validated run about to be recorded and enqueued."""

    config: RunConfig
    name: str | None
    tags: tuple[str, ...]


def _record_and_enqueue(
    planned: Sequence[_PlannedRun],
    sweep_id: str | None,
    store: RunStore | None,
    project: str | None = None,
) -> list[str]:
    """The preflight of every planned run (its checkpoint folder, a configured broker,
    the devices it asks for, the project's name), then each recorded as queued (in
    ``project``) and enqueued; their ids. Nothing is recorded unless every run passes
    the preflight."""
    store = store or RunStore()
    check_project(project)
    for run in planned:
        check_checkpoint_dir(run.config, store.home)
    broker_url()  # no broker configured: fail before anything is recorded
    for run in planned:
        check_devices(run.config)
    run_ids = []
    for run in planned:
        run_id = store.create_run(
            run.config.to_dict(), run.name, tags=run.tags, sweep_id=sweep_id, project=project
        )
        _enqueue(store, run_id, run.config)
        run_ids.append(run_id)
    return run_ids


def launch(
    config: RunConfig | Mapping[str, Any],
    name: str | None = None,
    tags: Iterable[str] = (),
    sweep_id: str | None = None,
    *,
    store: RunStore | None = None,
    project: str | None = None,
    prechecked: bool = False,
) -> str:
    """Validate, record as queued and enqueue one run (in ``project``); return its id.
    ``prechecked``: see ``launch_many``."""
    return launch_many(
        [config], [name], tags, sweep_id, store=store, project=project, prechecked=prechecked
    )[0]


def launch_many(
    configs: Sequence[RunConfig | Mapping[str, Any]],
    names: Sequence[str | None] = (),
    tags: Iterable[str] = (),
    sweep_id: str | None = None,
    *,
    run_tags: Sequence[Sequence[str]] = (),
    store: RunStore | None = None,
    project: str | None = None,
    prechecked: bool = False,
) -> list[str]:
    """Validate every config, then record and enqueue each; return their ids. One
    invalid config records none of them. ``run_tags``: each run's own tags, after the
    common ``tags``. ``prechecked``: the caller already ran the full check on what its
    configs vary (a study: ``check_spec`` at creation, every searched value's range), so
    only the typed config is built here: the full check loads torch and every dataset
    module, seconds of CPU a study's coordinator would spend for nothing."""
    validated = [
        (RunConfig.from_dict(dict(config)) if isinstance(config, Mapping) else config)
        if prechecked
        else validated_config(config)  # the one check
        for config in configs
    ]
    chosen = list(names) or [None] * len(validated)
    own_tags = list(run_tags) or [()] * len(validated)
    if not len(chosen) == len(own_tags) == len(validated):
        raise ValueError(
            f"names, run_tags: {len(chosen)} names and {len(own_tags)} tag lists for "
            f"{len(validated)} configs"
        )
    common = tuple(tags)
    planned = [
        _PlannedRun(config, name, (*common, *own))
        for config, name, own in zip(validated, chosen, own_tags, strict=True)
    ]
    return _record_and_enqueue(planned, sweep_id, store, project)


def check_sweep(
    base_config: RunConfig | Mapping[str, Any],
    grid: Mapping[str, Sequence[Any]],
    seeds: Sequence[int],
) -> list[tuple[RunConfig, str]]:
    """Every (validated config, label) a sweep would launch; records nothing.

    The first invalid combination raises ``ValueError`` naming it and the field
    (``"sweep combination optimizer.lr=-1: optimizer.lr: -1 is below the minimum 0.0"``).
    """
    base = validated_config(base_config).to_dict()
    validated = []
    for data, label in expand_grid(base, grid, seeds):
        try:
            validated.append((validated_config(data), label))
        except ValueError as error:
            raise ValueError(f"sweep combination {label or '(base)'}: {error}") from None
    return validated


def gpu_worker_alive() -> bool | None:
    """Whether a live worker serves the gpu queue (its Redis liveness key); None when
    no broker is configured or it cannot be reached (nothing is known)."""
    try:
        return routing.gpu_worker_alive(routing.redis_client(broker_url()))
    except (BrokerNotConfigured, redis.RedisError, OSError):
        return None


def launch_sweep(
    base_config: RunConfig | Mapping[str, Any],
    grid: Mapping[str, Sequence[Any]],
    seeds: Sequence[int],
    *,
    name: str | None = None,
    tags: Iterable[str] = (),
    store: RunStore | None = None,
    project: str | None = None,
) -> tuple[str, list[str]]:
    """One run per grid combination × seed, all sharing a new sweep id.

    Every expanded config is validated before any run is recorded; the first invalid
    one raises ``ValueError`` naming the combination.
    """
    validated = check_sweep(base_config, grid, seeds)
    sweep_id = f"sweep-{uuid.uuid4().hex[:10]}"
    prefix = name or sweep_id
    planned = [
        _PlannedRun(config, f"{prefix} {label}".strip(), tuple(tags)) for config, label in validated
    ]
    return sweep_id, _record_and_enqueue(planned, sweep_id, store, project)


def cancel(run_id: str, *, store: RunStore | None = None) -> str:
    """Ask a run to stop; return its status afterwards.

    A SLURM run is cancelled by ``worker.slurm.cancel`` (cancel flag, then scancel).
    A running run stops cooperatively within seconds (status ``cancelled`` set by its
    worker, metrics and last checkpoint kept). A queued run is marked
    ``cancelled`` at once; when its message reaches a worker, the status check there
    skips it. A run that already ended is left as it is.
    """
    store = store or RunStore()
    record = store.get_run(run_id)
    if record.executor.get("executor") == SLURM:
        from worker.slurm.cancel import cancel_slurm

        return cancel_slurm(record, store)
    if record.is_terminal:
        return record.status
    store.request_cancel(run_id)
    if record.status == "queued":
        # No Celery revoke: the store is the truth, and a worker that takes the message
        # skips a run that is no longer queued (and a revoke needs a result backend,
        # which there is none of).
        # ValueError: a worker took it in the meantime; it sees the cancel flag and stops
        with contextlib.suppress(ValueError):
            store.set_status(run_id, "cancelled", "cancelled before it started")
    return store.get_run(run_id).status


def submit_to_slurm(
    config: Mapping[str, Any],
    request: Mapping[str, Any],
    name: str | None,
    tags: Sequence[str],
    *,
    store: RunStore,
    project: str | None = None,
) -> str:
    """Validate ``config`` and submit it as a SLURM job (``worker.slurm``); the run id.
    A bad request, or SLURM's refusal, raises ``ValueError`` with one line."""
    from worker.slurm import SlurmRequest
    from worker.slurm.submit import submit_slurm

    return submit_slurm(
        dict(config), SlurmRequest(**request), name, tags, store=store, project=project
    )


def refresh_slurm_states(store: RunStore) -> None:
    """Ask SLURM about the store's SLURM runs once (pending reasons, ended jobs)."""
    from worker.slurm.states import refresh_slurm_runs

    refresh_slurm_runs(store)
