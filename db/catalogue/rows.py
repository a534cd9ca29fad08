"""One catalogue row per run: what listings show, read once from the run's files.

A row is built from the run folder by the writer that just changed it (``row_of``) or
by a rebuild, and turned back into a ``RunRecord`` by listings (``record_of``), so a
listing never opens a run folder. Times are epoch seconds; nested values (config, run
info, executor, extra, final metrics) are JSON text.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from db import layout
from db.atomic import CorruptFileError, read_json
from db.file_catalogue import FileCatalogue
from db.records import TERMINAL, RunRecord, build_record, to_datetime
from db.scheduler_record import read_executor
from db.status_file import read_status_doc
from sphere_engine.catalogue import Source, column_key, main_metric

DEFAULT_PROJECT = "default"
#: The run-info key where a run's writer stores its final metric values at its end.
FINAL_KEY = "final_metrics"
FINDINGS_KEY = "findings"
STUDY_TAG = "study:"

#: Column → Arrow type name (``db.catalogue.journal`` builds the schema from it).
COLUMNS: dict[str, str] = {
    "run_id": "string",
    "name": "string",
    "kind": "string",
    "status": "string",
    "status_message": "string",
    "project": "string",
    "tags": "list<string>",
    "notes": "string",
    "sweep_id": "string",
    "study_id": "string",
    "created_at": "double",
    "started_at": "double",
    "finished_at": "double",
    "heartbeat_at": "double",
    "progress_step": "int64",
    "progress_total": "int64",
    "host": "string",
    "device": "string",
    "archived": "bool",
    "disk_bytes": "int64",
    "main_metric": "string",
    "main_value": "double",
    "metrics": "string",
    "findings": "int64",
    "findings_summary": "string",
    "config": "string",
    "run_info": "string",
    "executor": "string",
    "extra": "string",
    "deleted": "bool",
    "read_ns": "int64",
}


def _optional(catalogue: FileCatalogue, path: Path) -> dict[str, Any] | None:
    try:
        return read_json(path)
    except CorruptFileError as error:
        catalogue.report_problem(f"{error} (ignored)")
        return None


def folder_bytes(folder: Path) -> int:
    """Bytes held by the files under ``folder`` (0 when it is gone)."""
    total = 0
    stack = [folder]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                else:
                    total += entry.stat(follow_symlinks=False).st_size
            except FileNotFoundError:
                continue
    return total


def tombstone(run_id: str, read_ns: int) -> dict[str, Any]:
    """The row of a run that no longer exists (deleted)."""
    return {"run_id": run_id, "deleted": True, "read_ns": read_ns}


def row_of(catalogue: FileCatalogue, run_id: str, *, disk: bool | None = None) -> dict[str, Any]:
    """The run's catalogue row from its folder, stamped with the time reading began
    (``read_ns``: of two rows of one run, the one read later is at least as new). A run
    whose folder or meta.json is gone is a tombstone. ``disk``: measure the folder's
    bytes (default: when the run has ended)."""
    read_ns = time.time_ns()
    folder = catalogue.run_dir(run_id)
    try:
        meta = read_json(folder / layout.META)
    except CorruptFileError as error:
        catalogue.report_problem(f"run {run_id} left out of the catalogue: {error}")
        return tombstone(run_id, read_ns)
    if meta is None:
        return tombstone(run_id, read_ns)
    status, _ = read_status_doc(catalogue, folder)
    user = _optional(catalogue, folder / layout.USER) or {}
    info = _optional(catalogue, folder / layout.RUN_INFO) or {}
    record = build_record(
        run_id,
        meta,
        status,
        _optional(catalogue, folder / layout.HEARTBEAT),
        user,
        info,
        read_executor(catalogue, run_id),
    )
    measure = record.status in TERMINAL if disk is None else disk
    return row_from_record(
        record,
        project=str(meta.get("project") or DEFAULT_PROJECT),
        archived=bool(user.get("archived", False)),
        disk_bytes=folder_bytes(folder) if measure else None,
        read_ns=read_ns,
    )


def _epoch(value: Any) -> float | None:
    return None if value is None else value.timestamp()


def row_from_record(
    record: RunRecord,
    *,
    project: str = DEFAULT_PROJECT,
    archived: bool = False,
    disk_bytes: int | None = None,
    read_ns: int = 0,
) -> dict[str, Any]:
    """The catalogue row of ``record`` (bench fills and tests build rows this way too)."""
    info = dict(record.run_info)
    final = info.get(FINAL_KEY) if isinstance(info.get(FINAL_KEY), dict) else {}
    evals = {key.split(":", 1)[1] for key in final if key.startswith(f"{Source.EVALUATION}:")}
    main = main_metric(evals)
    main_value = final.get(column_key(Source.EVALUATION, main)) if main else None
    found = info.get(FINDINGS_KEY) if isinstance(info.get(FINDINGS_KEY), list) else []
    study = next((t[len(STUDY_TAG) :] for t in record.tags if t.startswith(STUDY_TAG)), None)
    return {
        "run_id": record.run_id,
        "name": record.name,
        "kind": record.kind,
        "status": record.status,
        "status_message": record.status_message,
        "project": project,
        "tags": list(record.tags),
        "notes": record.notes,
        "sweep_id": record.sweep_id,
        "study_id": study,
        "created_at": _epoch(record.created_at),
        "started_at": _epoch(record.started_at),
        "finished_at": _epoch(record.finished_at),
        "heartbeat_at": _epoch(record.heartbeat_at),
        "progress_step": record.progress_step,
        "progress_total": record.progress_total,
        "host": record.host,
        "device": record.device,
        "archived": archived,
        "disk_bytes": disk_bytes,
        "main_metric": main,
        "main_value": float(main_value) if isinstance(main_value, (int, float)) else None,
        "metrics": json.dumps(final, sort_keys=True),
        "findings": len(found),
        "findings_summary": _findings_summary(found),
        "config": json.dumps(record.config, sort_keys=True),
        "run_info": json.dumps(info, sort_keys=True),
        "executor": json.dumps(record.executor, sort_keys=True),
        "extra": json.dumps(record.extra, sort_keys=True),
        "deleted": False,
        "read_ns": read_ns,
    }


def _findings_summary(found: list[Any]) -> str:
    titles = [str(f.get("title") or f.get("name") or "") for f in found if isinstance(f, dict)]
    return "; ".join(t for t in titles if t)


def _loads(text: Any) -> dict[str, Any]:
    if not isinstance(text, str) or not text:
        return {}
    value = json.loads(text)
    return value if isinstance(value, dict) else {}


def record_of(row: dict[str, Any]) -> RunRecord:
    """The ``RunRecord`` a row was made from."""

    def integer(key: str) -> int | None:
        value = row.get(key)
        return None if value is None or value != value else int(value)

    return RunRecord(
        run_id=row["run_id"],
        name=row.get("name") or row["run_id"],
        kind=row.get("kind") or "train",
        status=row.get("status") or "queued",
        status_message=row.get("status_message") or "",
        progress_step=integer("progress_step"),
        progress_total=integer("progress_total"),
        created_at=to_datetime(_number(row.get("created_at"))),
        started_at=to_datetime(_number(row.get("started_at"))),
        finished_at=to_datetime(_number(row.get("finished_at"))),
        heartbeat_at=to_datetime(_number(row.get("heartbeat_at"))),
        device=row.get("device") or "",
        host=row.get("host") or "",
        tags=list(row.get("tags") or []),
        notes=row.get("notes") or "",
        sweep_id=row.get("sweep_id"),
        config=_loads(row.get("config")),
        run_info=_loads(row.get("run_info")),
        extra=_loads(row.get("extra")),
        executor=_loads(row.get("executor")),
    )


def _number(value: Any) -> float | None:
    return None if value is None or value != value else float(value)
