"""``spherescope submit`` and ``spherescope cancel``: one command queues a run for the
Celery workers or, with ``--slurm``, submits it as a SLURM job (``worker.slurm``); one
cancels any run, wherever it runs."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path

from db.store import RunStore
from sphere_engine.config import RunConfig
from worker.settings import BrokerNotConfigured
from worker.slurm import SlurmError, SlurmRequest


def submit_command(
    config_path: str,
    overrides: list[str],
    *,
    name: str | None = None,
    tags: Iterable[str] = (),
    as_json: bool = False,
    slurm: SlurmRequest | None = None,
    project: str | None = None,
) -> int:
    """Queue (workers) or submit (SLURM) one run; print its id. Exit 2 for bad input."""
    from worker.submit import launch

    try:
        config = RunConfig.from_toml(config_path, overrides)
        run_name = name or Path(config_path).stem
        if slurm is not None:
            from worker.slurm.submit import submit_slurm

            run_id = submit_slurm(config, slurm, run_name, tags, project=project)
        else:
            run_id = launch(config, run_name, tags, project=project)
    except (ValueError, SlurmError, BrokerNotConfigured) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    record = RunStore().get_run(run_id)
    where = f"SLURM job {record.executor['job_id']}" if slurm else "the workers"
    print(f"run {run_id} ({run_name}) queued for {where}", file=sys.stderr)
    print(json.dumps({"run_id": run_id}) if as_json else run_id, flush=True)
    return 0


def cancel_command(run_id: str) -> int:
    """Cancel a run (Celery or SLURM); print its status afterwards."""
    from worker.submit import cancel

    try:
        status = cancel(run_id)
    except (ValueError, SlurmError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"run {run_id}: {status}")
    return 0
