"""Where a run executes, beside its status: ``executor.json`` (written once by whoever
submitted it: ``{"executor": "slurm", "job_id": ..., "partition": ..., "limits": ...}``)
and ``scheduler.json`` (written only by whoever polls the scheduler: its state and the
reason it gives, e.g. ``{"state": "PENDING", "reason": "Resources", "at": ...}``).

Two files, one writer each (see ``db.layout``). A run without ``executor.json`` ran
wherever it was claimed (a Celery worker, ``spherescope train``, the SDK). Torch-free.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from db import layout
from db.atomic import CorruptFileError, read_json, write_json_atomic
from db.file_catalogue import FileCatalogue

SLURM = "slurm"


def write_executor(catalogue: FileCatalogue, run_id: str, doc: Mapping[str, Any]) -> None:
    """Record where the run was submitted (``doc["executor"]`` names it)."""
    if not isinstance(doc.get("executor"), str):
        raise ValueError(f"executor record of run {run_id}: 'executor' must name one")
    folder = catalogue.existing_run_dir(run_id)
    write_json_atomic(folder / layout.EXECUTOR, dict(doc))


def write_scheduler_state(
    catalogue: FileCatalogue, run_id: str, state: str, reason: str = ""
) -> None:
    """What the scheduler says of the run's job now (state and reason)."""
    folder = catalogue.existing_run_dir(run_id)
    doc = {"state": state, "reason": reason, "at": time.time()}
    write_json_atomic(folder / layout.SCHEDULER, doc, fsync=False)


def _read(catalogue: FileCatalogue, path: Path) -> dict[str, Any] | None:
    try:
        return read_json(path)
    except CorruptFileError as error:  # reported; the run is shown without it
        catalogue.report_problem(f"{error} (ignored)")
        return None


def read_executor(catalogue: FileCatalogue, run_id: str) -> dict[str, Any]:
    """The executor record with the scheduler's last word under ``"scheduler"``; ``{}``
    for a run that was not submitted to a scheduler."""
    folder = catalogue.run_dir(run_id)
    doc = _read(catalogue, folder / layout.EXECUTOR)
    if not doc:
        return {}
    scheduler = _read(catalogue, folder / layout.SCHEDULER)
    return {**doc, "scheduler": scheduler or {}}
