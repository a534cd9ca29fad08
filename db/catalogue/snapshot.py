"""The catalogue as an Arrow table: the newest snapshot with the deltas applied, and
the compaction that folds deltas into a new snapshot (see ``db.catalogue.journal``).

Snapshots are immutable, so a process keeps the last one it read in memory and reads
a snapshot file once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from db.atomic import write_atomic, write_json_atomic
from db.catalogue import journal
from db.catalogue.rows import COLUMNS, row_of
from db.file_catalogue import FileCatalogue

_TYPES = {
    "string": pa.string(),
    "list<string>": pa.list_(pa.string()),
    "double": pa.float64(),
    "int64": pa.int64(),
    "bool": pa.bool_(),
}
SCHEMA = pa.schema([(name, _TYPES[kind]) for name, kind in COLUMNS.items()])

_cache_lock = threading.Lock()
_cache: dict[str, pa.Table] = {}
#: (snapshot, delta names, include_deleted) → the merged table: the last one read
_merged: dict[tuple[str, tuple[str, ...], bool], pa.Table] = {}


def to_table(rows: Iterable[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist([{c: r.get(c) for c in SCHEMA.names} for r in rows], SCHEMA)


def _read_snapshot(path: Path) -> pa.Table:
    key = str(path)
    with _cache_lock:
        if key in _cache:
            return _cache[key]
    table = pq.read_table(path, schema=SCHEMA)
    with _cache_lock:
        _cache.clear()  # one snapshot per process is enough: the newest
        _cache[key] = table
    return table


def _apply(table: pa.Table, rows: dict[str, dict[str, Any]]) -> pa.Table:
    """``table`` with the newer of its row and ``rows``' row per run."""
    if not rows:
        return table
    newer = to_table(rows.values())
    ids = newer.column("run_id")
    stamps = dict(zip(ids.to_pylist(), newer.column("read_ns").to_pylist(), strict=True))
    hit = pc.is_in(table.column("run_id"), value_set=ids)
    if pc.any(hit).as_py():
        old = table.filter(hit).select(["run_id", "read_ns"]).to_pylist()
        kept_old = {r["run_id"] for r in old if (r["read_ns"] or 0) > (stamps[r["run_id"]] or 0)}
        if kept_old:
            keep = pa.array(sorted(kept_old))
            newer = newer.filter(pc.invert(pc.is_in(ids, value_set=keep)))
            hit = pc.and_(hit, pc.invert(pc.is_in(table.column("run_id"), value_set=keep)))
    return pa.concat_tables([table.filter(pc.invert(hit)), newer])


def read_table(catalogue: FileCatalogue, *, include_deleted: bool = False) -> pa.Table:
    """Every run's current row (schema ``SCHEMA``). Opens no run folder except those of
    runs whose writer is in flight or died mid-change. The merged table is kept while
    neither the snapshot nor the deltas change (a page's reads in between share it)."""
    where = journal.paths_of(catalogue)
    for _ in range(20):
        names = journal.delta_files(catalogue)
        snapshots = journal.stamped(where.root, "snapshot-", ".parquet")
        if not snapshots:  # never built (a store from before the catalogue), or lost
            rebuild(catalogue, journal.folder_run_ids(catalogue))
            continue
        in_flight = journal.pending_runs(catalogue)
        key = (str(snapshots[-1][1]), tuple(sorted(names)), include_deleted)
        with _cache_lock:
            if not in_flight and key in _merged:
                return _merged[key]
        try:
            table = _read_snapshot(snapshots[-1][1])
            deltas = journal.newest_deltas(catalogue, names)
        except FileNotFoundError:
            continue
        journal.merge_into(deltas, journal.repair_pending(catalogue, in_flight))
        table = _apply(table, deltas)
        if not include_deleted and any(row.get("deleted") for row in deltas.values()):
            table = table.filter(pc.invert(pc.fill_null(table.column("deleted"), False)))
        if len(names) > journal.COMPACT_AFTER:
            compact(catalogue)
        elif not in_flight:
            with _cache_lock:
                _merged.clear()
                _merged[key] = table
        return table
    raise RuntimeError(f"catalogue {where.root}: kept changing while read")


def _write(catalogue: FileCatalogue, table: pa.Table, folded: list[str]) -> None:
    """Write ``table`` as the new snapshot (and its live rows), then remove the folded
    deltas and the older snapshots. The caller holds the compaction lock."""
    where = journal.paths_of(catalogue)
    olds = journal.stamped(where.root, "snapshot-", ".parquet") + journal.stamped(
        where.root, "live-", ".json"
    )
    stamp = max([time.time_ns(), *[n + 1 for n, _ in olds]])
    table = table.filter(pc.invert(pc.fill_null(table.column("deleted"), False)))
    snapshot = where.root / f"snapshot-{stamp:0{journal._NS_DIGITS}d}.parquet"
    write_atomic(snapshot, lambda temp: pq.write_table(table, temp, compression="zstd"))
    live = table.filter(pc.is_in(table.column("status"), pa.array(sorted(journal.LIVE_STATUSES))))
    write_json_atomic(
        where.root / f"live-{stamp:0{journal._NS_DIGITS}d}.json",
        {"rows": live.to_pylist()},
        fsync=False,
    )
    for name in folded:
        (where.deltas / name).unlink(missing_ok=True)
    for _, path in olds:
        path.unlink(missing_ok=True)


def compact(catalogue: FileCatalogue) -> int:
    """Fold the deltas into a new snapshot; how many were folded."""
    where = journal.paths_of(catalogue)
    with journal.compaction_lock(catalogue):
        names = journal.delta_files(catalogue)
        snapshots = journal.stamped(where.root, "snapshot-", ".parquet")
        table = _read_snapshot(snapshots[-1][1]) if snapshots else SCHEMA.empty_table()
        table = _apply(table, journal.newest_deltas(catalogue, names))
        _write(catalogue, table, names)
        return len(names)


def rebuild(catalogue: FileCatalogue, run_ids: Iterable[str]) -> int:
    """Replace the catalogue by the rows read from every run folder (a delta written
    meanwhile by a writer still wins if it is newer); how many runs it holds."""
    where = journal.paths_of(catalogue)
    with journal.compaction_lock(catalogue):
        names = journal.delta_files(catalogue)
        rows = {run_id: row_of(catalogue, run_id, disk=True) for run_id in run_ids}
        journal.merge_into(rows, journal.newest_deltas(catalogue, names))
        table = to_table(rows.values())
        _write(catalogue, table, names)
        for leftover in where.root.glob(".tmp-*"):
            if time.time() - leftover.stat().st_mtime > journal.STALE_PENDING_S:
                leftover.unlink(missing_ok=True)
        deleted = pc.sum(pc.fill_null(table.column("deleted"), False)).as_py() or 0
        return table.num_rows - int(deleted)
