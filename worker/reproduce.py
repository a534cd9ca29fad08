"""``spherescope reproduce NAME``: run a declared experiment (sphere_engine.experiments).

Every run is tagged ``repro:NAME`` and ``variant:LABEL`` and all runs of one call share
a sweep id ``repro-NAME-<time>``, so the report finds the latest complete set of them
in the run store. ``--local`` trains one run after the other in this process;
``--launch`` enqueues them on the workers.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from db.store import RunStore
from sphere_engine.config import RunConfig
from sphere_engine.errors import TrainingDivergedError
from sphere_engine.experiments import get_experiment
from sphere_engine.experiments.plan import plan
from sphere_engine.validation import validated_config
from worker.local_run import record_train_run, train_recorded


def train_in_process(
    config: dict[str, Any], name: str, tags: Sequence[str], sweep_id: str, store: RunStore
) -> str:
    """Train one run here, recorded in ``store`` like any run; return its id. A run that
    diverges or fails is recorded ``failed`` (by the shared lifecycle) and the
    experiment goes on; anything else (e.g. Ctrl-C) stops it."""
    validated = validated_config(config)
    run_id = record_train_run(store, validated, name, tags=tags, sweep_id=sweep_id)
    try:
        train_recorded(store, run_id, validated)
    except (TrainingDivergedError, ValueError) as error:
        print(f"  failed: {error}", file=sys.stderr)
    return run_id


def reproduce(
    name: str,
    *,
    seeds: Sequence[int] | None = None,
    steps_scale: float = 1.0,
    data_root: str | None = None,
    mode: str = "local",
    overrides: Sequence[str] = (),
    variants: Sequence[str] | None = None,
    store: RunStore | None = None,
    log: Any = sys.stderr,
) -> tuple[str, list[str]]:
    """Run (``mode="local"``) or enqueue (``"launch"``) every run of experiment ``name``.

    Returns (sweep id, run ids). All configs are planned and validated before the first
    run starts, so a bad declaration fails at once.
    """
    if mode not in ("local", "launch"):
        raise ValueError(f"mode: {mode!r} is not allowed; choose 'local' or 'launch'")
    experiment = get_experiment(name)
    runs = plan(experiment, seeds, steps_scale, data_root, overrides, variants)

    for run in runs:
        try:
            RunConfig.from_dict(run.config)
        except ValueError as error:
            raise ValueError(f"{run.name}: {error}") from None
    store = store or RunStore()
    stamp = datetime.now(tz=UTC).strftime("%Y%m%d-%H%M%S")
    sweep_id = f"repro-{name}-{stamp}"
    run_ids = []
    for index, run in enumerate(runs, 1):
        started = time.monotonic()
        if mode == "launch":
            from worker.submit import launch

            run_ids.append(launch(run.config, run.name, run.tags, sweep_id, store=store))
            continue
        run_id = train_in_process(run.config, run.name, run.tags, sweep_id, store)
        run_ids.append(run_id)
        status = store.get_run(run_id).status
        elapsed = time.monotonic() - started
        print(f"[{index}/{len(runs)}] {run.name}: {status} ({elapsed:.1f} s)", file=log)
    return sweep_id, run_ids


def reproduce_command(
    names: Sequence[str],
    seeds: Sequence[int] | None,
    steps_scale: float,
    data_root: str | None,
    launch: bool,
    overrides: Sequence[str] = (),
    variants: Sequence[str] | None = None,
) -> int:
    """The CLI entry: ``all`` runs every declared experiment; returns the exit code."""
    from sphere_engine.experiments import EXPERIMENTS

    chosen = list(EXPERIMENTS) if list(names) == ["all"] else list(names)
    try:
        for name in chosen:
            started = time.monotonic()
            sweep_id, run_ids = reproduce(
                name,
                seeds=seeds,
                steps_scale=steps_scale,
                data_root=data_root,
                mode="launch" if launch else "local",
                overrides=overrides,
                variants=variants,
            )
            verb = "queued" if launch else "ran"
            print(
                f"{name}: {verb} {len(run_ids)} runs as {sweep_id} "
                f"({time.monotonic() - started:.0f} s)",
                file=sys.stderr,
            )
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0
