"""``RunStore``: runs, their status and their logged values under ``SPHERESCOPE_HOME``.

Many processes (workers on several machines, the dashboard) use one store at once; no
process opens a database file. Writers append immutable Parquet chunks and replace
small JSON files atomically (see ``db.layout`` for the folder layout); readers query
the Parquet files through DuckDB (``db.reader``, ``db.queries``).
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import threading
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from db import layout
from db.atomic import CorruptFileError, read_json, write_json_atomic
from db.records import (
    TERMINAL,
    RunRecord,
    build_record,
    check_kind,
    check_status,
    check_tags,
    check_transition,
)
from db.schema import TABLES

if TYPE_CHECKING:
    from db.tracker import StoreTracker

log = logging.getLogger(__name__)

MAX_PROBLEMS = 1000
_RECORD_FIELDS = ("device", "host")


class RunStore:
    """The run store rooted at ``home`` (default ``$SPHERESCOPE_HOME`` or
    ``./spherescope-data``). Cheap to create; safe to share between threads."""

    def __init__(self, home: str | os.PathLike[str] | None = None) -> None:
        self.home = layout.resolve_home(home)
        self.runs_dir = self.home / "runs"
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._problems: dict[str, None] = {}  # insertion-ordered set of messages
        self._bad_files: dict[str, str] = {}
        self._good_files: set[str] = set()

    def __repr__(self) -> str:
        return f"RunStore({str(self.home)!r})"

    # -- paths ----------------------------------------------------------------------
    def run_dir(self, run_id: str) -> Path:
        """The folder of ``run_id`` (checked for form, not for existence)."""
        return self.runs_dir / layout.check_run_id(run_id)

    def table_dir(self, run_id: str, table: str) -> Path:
        if table not in TABLES:
            raise ValueError(f"unknown table {table!r}; known: {', '.join(TABLES)}")
        return self.run_dir(run_id) / "tables" / table

    def checkpoint_dir(self, run_id: str) -> Path:
        """Where the run's checkpoint files go (created on demand)."""
        folder = self._existing_run_dir(run_id) / "checkpoints"
        folder.mkdir(exist_ok=True)
        return folder

    def exists(self, run_id: str) -> bool:
        return (self.run_dir(run_id) / layout.META).is_file()

    def _existing_run_dir(self, run_id: str) -> Path:
        folder = self.run_dir(run_id)
        if not (folder / layout.META).is_file():
            raise ValueError(f"unknown run id {run_id!r} (no such run in {self.runs_dir})")
        return folder

    # -- creating and reading records -------------------------------------------------
    def create_run(
        self,
        config: Mapping[str, Any],
        name: str | None = None,
        *,
        kind: str = "train",
        tags: Iterable[str] = (),
        sweep_id: str | None = None,
        status: str = "queued",
    ) -> str:
        """Record a new run and return its id (time-sortable, unique across machines)."""
        if not isinstance(config, Mapping):
            raise ValueError(f"config must be a dict, got {type(config).__name__}")
        if name is not None and not isinstance(name, str):
            raise ValueError(f"name must be a string, got {name!r}")
        if sweep_id is not None and not isinstance(sweep_id, str):
            raise ValueError(f"sweep_id must be a string, got {sweep_id!r}")
        check_kind(kind)
        check_status(status)
        tags = check_tags(tags)
        now = time.time()
        stamp = datetime.fromtimestamp(now, tz=UTC).strftime("%Y%m%d-%H%M%S")
        run_id = f"{stamp}-{uuid.uuid4().hex[:8]}"
        meta = {
            "run_id": run_id,
            "name": name or run_id,
            "kind": kind,
            "config": dict(config),
            "sweep_id": sweep_id,
            "created_at": now,
            "initial_status": status,
        }
        status_doc: dict[str, Any] = {"status": status, "message": ""}
        if status == "running":
            status_doc["started_at"] = now
        if status in TERMINAL:
            status_doc["finished_at"] = now
        # Build the folder under a hidden name, then rename: readers never see half a run.
        staging = self.runs_dir / f".new-{run_id}"
        staging.mkdir()
        try:
            write_json_atomic(staging / layout.META, meta)
            write_json_atomic(staging / layout.STATUS, status_doc)
            write_json_atomic(staging / layout.USER, {"tags": tags, "notes": ""})
            os.rename(staging, self.runs_dir / run_id)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return run_id

    def run_ids(self) -> list[str]:
        """Ids of all runs, sorted (ids start with their creation time, to the second)."""
        try:
            names = os.listdir(self.runs_dir)
        except FileNotFoundError:
            return []
        return sorted(n for n in names if layout.RUN_ID_PATTERN.match(n))

    def get_run(self, run_id: str) -> RunRecord:
        """The record of ``run_id`` (``ValueError`` if unknown or its meta.json is corrupt)."""
        folder = self._existing_run_dir(run_id)
        try:
            meta = read_json(folder / layout.META)
        except CorruptFileError as error:
            self.report_problem(str(error))
            raise ValueError(f"run {run_id}: {error}") from None
        if meta is None:
            raise ValueError(f"unknown run id {run_id!r} (it was deleted)")
        return build_record(
            run_id,
            meta,
            self._read_optional(folder / layout.STATUS),
            self._read_optional(folder / layout.HEARTBEAT),
            self._read_optional(folder / layout.USER),
            self._read_optional(folder / layout.RUN_INFO),
        )

    def list_runs(
        self,
        *,
        status: str | Sequence[str] | None = None,
        search: str | None = None,
        tag: str | None = None,
        sweep_id: str | None = None,
        kind: str | None = None,
    ) -> list[RunRecord]:
        """Records matching every given filter, newest first. ``search`` matches the
        name, id, notes and tags (case-insensitive). Unreadable runs are skipped and
        reported in ``problems()``."""
        statuses = {status} if isinstance(status, str) else set(status or ())
        for one in statuses:
            check_status(one)
        if kind is not None:
            check_kind(kind)
        needle = search.strip().lower() if search else ""
        records = []
        for run_id in self.run_ids():
            try:
                record = self.get_run(run_id)
            except ValueError as error:
                if self.run_dir(run_id).exists():
                    self.report_problem(f"run folder {run_id} skipped: {error}")
                continue
            if statuses and record.status not in statuses:
                continue
            if kind is not None and record.kind != kind:
                continue
            if sweep_id is not None and record.sweep_id != sweep_id:
                continue
            if tag is not None and tag not in record.tags:
                continue
            if needle:
                haystack = " ".join([record.name, record.run_id, record.notes, *record.tags])
                if needle not in haystack.lower():
                    continue
            records.append(record)
        epoch = datetime.min.replace(tzinfo=UTC)
        records.sort(key=lambda r: (r.created_at or epoch, r.run_id), reverse=True)
        return records

    def _read_optional(self, path: Path) -> dict[str, Any] | None:
        try:
            return read_json(path)
        except CorruptFileError as error:
            self.report_problem(f"{error} (ignored)")
            return None

    # -- status, heartbeat, cancel ------------------------------------------------------
    def set_status(self, run_id: str, status: str, message: str = "", **fields: Any) -> None:
        """Change the run's status (``ValueError`` for a transition that makes no sense).

        ``running`` sets the start time, a terminal status the finish time, ``queued``
        clears both and the cancel flag (a rerun). ``device``/``host`` go to the
        record; other keyword fields (JSON values) go to ``record.extra``.
        """
        check_status(status)
        if not isinstance(message, str):
            raise ValueError(f"status message must be a string, got {message!r}")
        folder = self._existing_run_dir(run_id)
        old = self._read_optional(folder / layout.STATUS) or {}
        old_status = old.get("status", "queued")
        check_transition(run_id, old_status, status)
        now = time.time()
        doc = dict(old)
        doc["status"] = status
        doc["message"] = message
        if status == "queued":
            doc.pop("started_at", None)
            doc.pop("finished_at", None)
            (folder / layout.CANCEL).unlink(missing_ok=True)
        elif status == "running" and old_status != "running":
            doc["started_at"] = now
            doc.pop("finished_at", None)
        elif status in TERMINAL and old_status != status:
            doc["finished_at"] = now
        extra = dict(doc.get("extra", {}))
        for key, value in fields.items():
            if key in _RECORD_FIELDS:
                doc[key] = str(value)
            else:
                extra[key] = value
        doc["extra"] = extra
        write_json_atomic(folder / layout.STATUS, doc)

    def end_run(self, run_id: str, status: str, message: str = "", **fields: Any) -> None:
        """Set a terminal status, then compact the run (one file per table for readers).

        For the process that wrote the run, once its tracker has flushed. The reaper and
        the Celery parent use ``set_status`` alone: DuckDB and Arrow thread pools must
        not start in a process that later forks pool children. A failed compaction
        loses nothing (the chunks stay readable) and is reported in ``problems()``.
        """
        if status not in TERMINAL:
            raise ValueError(f"end_run: {status!r} is not a terminal status ({sorted(TERMINAL)})")
        self.set_status(run_id, status, message, **fields)
        try:
            self.compact(run_id)
        except Exception as error:  # the status is written; a failed compaction loses nothing
            self.report_problem(f"run {run_id}: compaction after it ended failed ({error})")

    def heartbeat(self, run_id: str, step: int | None = None, total: int | None = None) -> None:
        """Record that the run is alive, with its progress (``None`` keeps the last value)."""
        folder = self._existing_run_dir(run_id)
        if step is None or total is None:
            old = self._read_optional(folder / layout.HEARTBEAT) or {}
            step = old.get("step") if step is None else step
            total = old.get("total") if total is None else total
        doc = {
            "at": time.time(),
            "step": None if step is None else int(step),
            "total": None if total is None else int(total),
        }
        write_json_atomic(folder / layout.HEARTBEAT, doc, fsync=False)

    def note_write_error(self, run_id: str, message: str) -> None:
        """Record a tracker's failed write in the run's status (``extra.write_error``)."""
        folder = self._existing_run_dir(run_id)
        doc = self._read_optional(folder / layout.STATUS) or {"status": "running"}
        doc["extra"] = {**doc.get("extra", {}), "write_error": message,
                        "write_error_at": time.time()}  # fmt: skip
        write_json_atomic(folder / layout.STATUS, doc)

    def mark_lost_runs(self, max_silence_s: float = 300.0) -> list[str]:
        """Mark ``running`` runs whose last heartbeat (or start) is older than
        ``max_silence_s`` as ``lost``; return their ids."""
        lost = []
        cutoff = time.time() - max_silence_s
        for record in self.list_runs(status="running"):
            last = record.heartbeat_at or record.started_at or record.created_at
            if last is not None and last.timestamp() < cutoff:
                self.set_status(
                    record.run_id, "lost", f"no heartbeat for more than {max_silence_s:.0f} s"
                )
                lost.append(record.run_id)
        return lost

    def request_cancel(self, run_id: str, reason: str = "") -> None:
        """Ask the run's trainer to stop (it polls ``cancel_requested``); ``reason``
        (e.g. "stopped: the stack was shut down") starts its final status message."""
        path = self._existing_run_dir(run_id) / layout.CANCEL
        path.write_text(json.dumps({"at": time.time(), "reason": reason}) + "\n", "utf-8")

    def cancel_reason(self, run_id: str) -> str:
        """The ``reason`` given to ``request_cancel`` ("" when none or unreadable)."""
        try:
            doc = json.loads((self.run_dir(run_id) / layout.CANCEL).read_text("utf-8"))
        except (OSError, ValueError):
            return ""
        return str(doc.get("reason") or "") if isinstance(doc, dict) else ""

    def cancel_requested(self, run_id: str) -> bool:
        """Cheap enough to call every training iteration (one ``stat``)."""
        return os.path.exists(self.run_dir(run_id) / layout.CANCEL)

    # -- user fields ---------------------------------------------------------------------
    def set_tags(self, run_id: str, tags: Iterable[str]) -> None:
        self._update_user(run_id, tags=check_tags(tags))

    def set_notes(self, run_id: str, notes: str) -> None:
        if not isinstance(notes, str):
            raise ValueError(f"notes must be a string, got {notes!r}")
        self._update_user(run_id, notes=notes)

    def _update_user(self, run_id: str, **changes: Any) -> None:
        folder = self._existing_run_dir(run_id)
        doc = self._read_optional(folder / layout.USER) or {}
        doc.update(changes)
        write_json_atomic(folder / layout.USER, doc)

    def update_run_info(self, run_id: str, info: Mapping[str, Any]) -> None:
        """Merge ``info`` (from ``track_run_info``) into the run's info; values that are
        not JSON (numpy scalars, paths, ...) are stored as plain numbers or strings."""
        if not isinstance(info, Mapping):
            raise ValueError(f"run info must be a dict, got {type(info).__name__}")
        folder = self._existing_run_dir(run_id)
        doc = self._read_optional(folder / layout.RUN_INFO) or {}
        doc.update({str(key): _plain(value) for key, value in info.items()})
        write_json_atomic(folder / layout.RUN_INFO, doc)

    def delete_run(self, run_id: str) -> None:
        """Remove the run and everything it logged. The folder is first renamed away
        (atomic), so readers see the run entirely or not at all."""
        folder = self._existing_run_dir(run_id)
        trash = self.home / "trash"
        trash.mkdir(exist_ok=True)
        target = trash / f"{run_id}-{uuid.uuid4().hex[:8]}"
        os.rename(folder, target)
        shutil.rmtree(target, ignore_errors=True)

    # -- writing values --------------------------------------------------------------
    def tracker(self, run_id: str, flush_interval: float = 1.0, **options: Any) -> StoreTracker:
        """The store-backed ``Tracker`` for ``run_training`` (see ``db.tracker``)."""
        from db.tracker import StoreTracker

        return StoreTracker(self, run_id, flush_interval=flush_interval, **options)

    def compact(self, run_id: str) -> dict[str, int]:
        """Merge each table's chunks into one file; returns files merged per table."""
        from db.compaction import compact_run

        return compact_run(self, run_id)

    # -- files for readers, and problems ------------------------------------------------
    def live_files(self, table: str, run_ids: Iterable[str]) -> list[Path]:
        """The Parquet files a reader should read for ``table`` of ``run_ids``, minus
        known-bad files. Foreign files in the folders are reported, never read."""
        paths: list[Path] = []
        for run_id in run_ids:
            files = layout.scan_table(self.table_dir(run_id, table))
            for path in files.foreign:
                self.report_problem(f"foreign file ignored: {path}")
            with self._lock:
                paths.extend(p for p in files.live if str(p) not in self._bad_files)
        return paths

    def report_problem(self, message: str) -> None:
        with self._lock:
            if message in self._problems:
                return
            self._problems[message] = None
            while len(self._problems) > MAX_PROBLEMS:
                self._problems.pop(next(iter(self._problems)))
        log.warning("run store %s: %s", self.home, message)

    def problems(self) -> list[str]:
        """What readers had to skip or ignore (corrupt files, foreign files), oldest first."""
        with self._lock:
            return list(self._problems)

    def mark_bad_file(self, path: Path, reason: str) -> None:
        with self._lock:
            self._bad_files[str(path)] = reason
        self.report_problem(f"corrupt file skipped: {path}: {reason}")

    def is_bad_file(self, path: Path) -> bool:
        with self._lock:
            return str(path) in self._bad_files

    def is_known_good(self, path: Path) -> bool:
        with self._lock:
            return str(path) in self._good_files

    def mark_known_good(self, path: Path) -> None:
        with self._lock:
            self._good_files.add(str(path))


def _plain(value: Any) -> Any:
    """A JSON-friendly version of ``value`` (numpy scalars/arrays, tuples, paths)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "tolist"):  # numpy scalar or array
        return _plain(value.tolist())
    return str(value)
