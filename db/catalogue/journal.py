"""Where the catalogue lives and how it changes: a snapshot, the live rows, and deltas.

    <home>/catalogue/snapshot-<n>.parquet   every run's row (immutable; newest n wins)
    <home>/catalogue/live-<n>.json          the rows of that snapshot whose run can still
                                            change (queued, running, lost), for readers
                                            that must not start Arrow (a worker's parent)
    <home>/catalogue/deltas/d-<read_ns>-<run_id>-<token>.json   one row, written by the
                                            writer that changed the run (immutable)
    <home>/catalogue/pending/<run_id>-<token>   a writer's change in flight (see below)
    <home>/catalogue/compaction.lock        held (flock) by the one compaction at a time

A run's current row is its row with the largest ``read_ns`` among the snapshot and the
deltas (``rows.row_of`` stamps the time it began reading the run's files, so the row
read last reflects every write finished before it). Writers never rewrite a file, so
concurrent writers in any number of processes and hosts need no lock; only compaction
(folding deltas into a new snapshot) takes one. A writer first creates its ``pending``
marker, then writes the run's files, then its delta, then removes the marker: a writer
killed in between leaves the marker, and every reader reads such a run from its folder
(and repairs the catalogue once the marker is stale). A reader that finds a file gone
mid-read (a compaction removed it) reads again.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from db import layout
from db.atomic import write_json_atomic
from db.file_catalogue import FileCatalogue

LIVE_STATUSES: frozenset[str] = frozenset({"queued", "running", "lost"})
#: A pending marker this old belongs to a writer that died (a change takes milliseconds).
STALE_PENDING_S = 30.0
#: Readers that may start Arrow fold the deltas into a new snapshot beyond this many.
COMPACT_AFTER = 256
_NS_DIGITS = 20


@dataclass(frozen=True)
class Paths:
    root: Path

    @property
    def deltas(self) -> Path:
        return self.root / "deltas"

    @property
    def pending(self) -> Path:
        return self.root / "pending"

    @property
    def lock(self) -> Path:
        return self.root / "compaction.lock"


def paths_of(catalogue: FileCatalogue) -> Paths:
    return Paths(catalogue.home / "catalogue")


# -- writers ------------------------------------------------------------------------------
@contextlib.contextmanager
def pending(catalogue: FileCatalogue, run_id: str) -> Iterator[None]:
    """Mark ``run_id`` as being changed for the duration of the block, then write its
    delta (read from its folder after the change) and clear the mark."""
    from db.catalogue.rows import row_of

    where = paths_of(catalogue)
    where.pending.mkdir(parents=True, exist_ok=True)
    marker = where.pending / f"{run_id}-{uuid.uuid4().hex[:8]}"
    marker.touch()
    try:
        yield
    finally:
        write_delta(catalogue, row_of(catalogue, run_id))
        marker.unlink(missing_ok=True)


def write_delta(catalogue: FileCatalogue, row: dict[str, Any]) -> None:
    """Record one run's row (immutable file; readers take the newest per run)."""
    where = paths_of(catalogue)
    where.deltas.mkdir(parents=True, exist_ok=True)
    name = f"d-{row['read_ns']:0{_NS_DIGITS}d}-{row['run_id']}-{uuid.uuid4().hex[:8]}.json"
    write_json_atomic(where.deltas / name, row, fsync=False)


# -- reading the small files ----------------------------------------------------------------
def _delta_key(name: str) -> tuple[str, int] | None:
    """(run_id, read_ns) of a delta file name."""
    if not (name.startswith("d-") and name.endswith(".json")):
        return None
    body = name[2:-5]
    ns, _, rest = body.partition("-")
    run_id, _, _token = rest.rpartition("-")
    if not ns.isdigit() or not run_id:
        return None
    return run_id, int(ns)


def delta_files(catalogue: FileCatalogue) -> list[str]:
    try:
        return os.listdir(paths_of(catalogue).deltas)
    except FileNotFoundError:
        return []


def newest_deltas(catalogue: FileCatalogue, names: list[str]) -> dict[str, dict[str, Any]]:
    """run_id → its newest delta row among ``names`` (``FileNotFoundError`` when one was
    folded away meanwhile: the caller reads again)."""
    newest: dict[str, tuple[int, str]] = {}
    for name in names:
        key = _delta_key(name)
        if key and (key[0] not in newest or key[1] > newest[key[0]][0]):
            newest[key[0]] = (key[1], name)
    folder = paths_of(catalogue).deltas
    rows = {}
    for run_id, (_, name) in newest.items():
        text = (folder / name).read_text("utf-8")
        rows[run_id] = json.loads(text)
    return rows


def stamped(root: Path, prefix: str, suffix: str) -> list[tuple[int, Path]]:
    """Files ``<prefix><n><suffix>`` in ``root``, oldest first."""
    found = []
    try:
        names = os.listdir(root)
    except FileNotFoundError:
        return []
    for name in names:
        if name.startswith(prefix) and name.endswith(suffix):
            middle = name[len(prefix) : len(name) - len(suffix)]
            if middle.isdigit():
                found.append((int(middle), root / name))
    return sorted(found)


def pending_runs(catalogue: FileCatalogue) -> dict[str, float]:
    """run_id → age in seconds of its oldest pending marker."""
    folder = paths_of(catalogue).pending
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return {}
    now = time.time()
    ages: dict[str, float] = {}
    for entry in entries:
        run_id = entry.name.rpartition("-")[0]
        try:
            age = now - entry.stat().st_mtime
        except FileNotFoundError:
            continue
        ages[run_id] = max(age, ages.get(run_id, 0.0))
    return ages


def repair_pending(catalogue: FileCatalogue, ages: dict[str, float]) -> dict[str, dict[str, Any]]:
    """Rows of the runs with a writer in flight, read from their folders; a stale
    marker (its writer died) is replaced by the delta its writer did not write."""
    from db.catalogue.rows import row_of

    rows = {}
    folder = paths_of(catalogue).pending
    for run_id, age in ages.items():
        row = row_of(catalogue, run_id)
        rows[run_id] = row
        if age > STALE_PENDING_S:
            write_delta(catalogue, row)
            for marker in folder.glob(f"{run_id}-*"):
                if time.time() - marker.stat().st_mtime > STALE_PENDING_S:
                    marker.unlink(missing_ok=True)
    return rows


def read_live_rows(catalogue: FileCatalogue) -> dict[str, dict[str, Any]]:
    """run_id → current row of every run whose row may be live (from ``live-<n>.json``,
    the deltas and the pending runs; JSON only, no Arrow). Rows of runs that ended
    since are included; the caller filters by status."""
    from db.catalogue.rows import row_of

    where = paths_of(catalogue)
    for _ in range(20):
        names = delta_files(catalogue)
        lives = stamped(where.root, "live-", ".json")
        try:
            base = json.loads(lives[-1][1].read_text("utf-8"))["rows"] if lives else None
            deltas = newest_deltas(catalogue, names)
        except FileNotFoundError:
            continue  # a compaction folded them meanwhile: read again
        if base is None:  # never built (a store from before the catalogue): read the runs
            base = [row_of(catalogue, run_id) for run_id in folder_run_ids(catalogue)]
        rows = {row["run_id"]: row for row in base}
        merge_into(rows, deltas)
        merge_into(rows, repair_pending(catalogue, pending_runs(catalogue)))
        return rows
    raise RuntimeError(f"catalogue {where.root}: kept changing while read")


def folder_run_ids(catalogue: FileCatalogue) -> list[str]:
    """Ids of the run folders (what a rebuild reads)."""
    try:
        names = os.listdir(catalogue.runs_dir)
    except FileNotFoundError:
        return []
    return sorted(n for n in names if layout.RUN_ID_PATTERN.match(n))


def merge_into(rows: dict[str, dict[str, Any]], newer: dict[str, dict[str, Any]]) -> None:
    """Keep, per run, the row read last."""
    for run_id, row in newer.items():
        old = rows.get(run_id)
        if old is None or int(row.get("read_ns") or 0) >= int(old.get("read_ns") or 0):
            rows[run_id] = row


@contextlib.contextmanager
def compaction_lock(catalogue: FileCatalogue) -> Iterator[None]:
    where = paths_of(catalogue)
    where.root.mkdir(parents=True, exist_ok=True)
    handle = os.open(where.lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)
