"""Creating, reading, listing and deleting run records (``meta.json`` and friends).

Functions over a ``FileCatalogue`` (which locates the run folders and collects the
problems met while reading); ``RunStore`` exposes them as methods.
"""

from __future__ import annotations

import os
import re
import shutil
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from db import layout
from db.atomic import CorruptFileError, read_json, write_json_atomic
from db.catalogue import journal
from db.catalogue.listing import list_records
from db.catalogue.rows import DEFAULT_PROJECT
from db.file_catalogue import FileCatalogue
from db.records import (
    TERMINAL,
    RunRecord,
    build_record,
    check_kind,
    check_status,
    check_status_filter,
    check_tags,
)
from db.scheduler_record import read_executor
from db.status_file import read_status_doc

PROJECT_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def read_optional(catalogue: FileCatalogue, path: Path) -> dict[str, Any] | None:
    """A run's optional JSON file; a corrupt one is reported and read as missing."""
    try:
        return read_json(path)
    except CorruptFileError as error:
        catalogue.report_problem(f"{error} (ignored)")
        return None


def create_run(
    catalogue: FileCatalogue,
    config: Mapping[str, Any],
    name: str | None = None,
    *,
    kind: str = "train",
    tags: Iterable[str] = (),
    sweep_id: str | None = None,
    status: str = "queued",
    project: str | None = None,
) -> str:
    """Record a new run and return its id (time-sortable, unique across machines).
    ``project``: the project it belongs to (default ``default``)."""
    if not isinstance(config, Mapping):
        raise ValueError(f"config must be a dict, got {type(config).__name__}")
    if name is not None and not isinstance(name, str):
        raise ValueError(f"name must be a string, got {name!r}")
    if sweep_id is not None and not isinstance(sweep_id, str):
        raise ValueError(f"sweep_id must be a string, got {sweep_id!r}")
    check_kind(kind)
    check_status(status)
    tags = check_tags(tags)
    project = check_project(project)
    now = time.time()
    stamp = datetime.fromtimestamp(now, tz=UTC).strftime("%Y%m%d-%H%M%S")
    run_id = f"{stamp}-{uuid.uuid4().hex[:8]}"
    meta = {
        "run_id": run_id,
        "name": name or run_id,
        "kind": kind,
        "config": dict(config),
        "sweep_id": sweep_id,
        "project": project,
        "created_at": now,
        "initial_status": status,
    }
    status_doc: dict[str, Any] = {"status": status, "message": ""}
    if status == "running":
        status_doc["started_at"] = now
    if status in TERMINAL:
        status_doc["finished_at"] = now
    # Build the folder under a hidden name, then rename: readers never see half a run.
    staging = catalogue.runs_dir / f".new-{run_id}"
    staging.mkdir()
    with journal.pending(catalogue, run_id):
        try:
            write_json_atomic(staging / layout.META, meta)
            write_json_atomic(staging / layout.STATUS, status_doc)
            write_json_atomic(staging / layout.USER, {"tags": tags, "notes": ""})
            os.rename(staging, catalogue.runs_dir / run_id)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return run_id


def check_project(project: object) -> str:
    """A project name (default ``default``): letters, digits, ``-``, ``_``, ``.``."""
    if project is None or project == "":
        return DEFAULT_PROJECT
    if not isinstance(project, str) or not PROJECT_PATTERN.match(project):
        raise ValueError(
            f"project {project!r} is malformed: expected letters, digits, '-', '_' or '.' "
            "(at most 64 characters)"
        )
    return project


def run_ids(catalogue: FileCatalogue) -> list[str]:
    """Ids of all runs, sorted (ids start with their creation time, to the second)."""
    try:
        names = os.listdir(catalogue.runs_dir)
    except FileNotFoundError:
        return []
    return sorted(n for n in names if layout.RUN_ID_PATTERN.match(n))


def get_run(catalogue: FileCatalogue, run_id: str) -> RunRecord:
    """The record of ``run_id`` (``ValueError`` if unknown or its meta.json is corrupt)."""
    folder = catalogue.existing_run_dir(run_id)
    try:
        meta = read_json(folder / layout.META)
    except CorruptFileError as error:
        catalogue.report_problem(str(error))
        raise ValueError(f"run {run_id}: {error}") from None
    if meta is None:
        raise ValueError(f"unknown run id {run_id!r} (it was deleted)")
    status, _ = read_status_doc(catalogue, folder)  # rebuilt if damaged, never guessed
    return build_record(
        run_id,
        meta,
        status,
        read_optional(catalogue, folder / layout.HEARTBEAT),
        read_optional(catalogue, folder / layout.USER),
        read_optional(catalogue, folder / layout.RUN_INFO),
        read_executor(catalogue, run_id),
    )


def list_runs(
    catalogue: FileCatalogue,
    *,
    status: str | Sequence[str] | None = None,
    search: str | None = None,
    tag: str | None = None,
    sweep_id: str | None = None,
    kind: str | None = None,
    project: str | None = None,
    archived: bool | None = None,
) -> list[RunRecord]:
    """Records matching every given filter, newest first, read from the run catalogue
    (``db.catalogue``): only runs that can still change are read from their folders.
    ``search`` matches the name, id, notes and tags (case-insensitive); ``archived``:
    None lists both, False hides archived runs, True lists only them."""
    statuses = {status} if isinstance(status, str) else set(status or ())
    for one in statuses:
        check_status_filter(one)
    if kind is not None:
        check_kind(kind)
    needle = search.strip().lower() if search else ""
    return list_records(
        catalogue,
        statuses=statuses,
        kind=kind,
        sweep_id=sweep_id,
        project=project,
        archived=archived,
        tag=tag,
        needle=needle,
    )


def delete_run(catalogue: FileCatalogue, run_id: str) -> None:
    """Move the run and everything it logged to ``<home>/trash`` (``spherescope store gc``
    empties it). The folder is renamed away (atomic), so readers see the run entirely
    or not at all."""
    folder = catalogue.existing_run_dir(run_id)
    trash = catalogue.home / layout.TRASH
    trash.mkdir(exist_ok=True)
    with journal.pending(catalogue, run_id):
        os.rename(folder, trash / f"{run_id}-{uuid.uuid4().hex[:8]}")
