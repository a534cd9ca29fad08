"""Run records from the catalogue: what ``db.run_index.list_runs`` returns.

Rows of runs that can still change (``queued``, ``running``) are read again from their
folders, so their heartbeat, progress and status are current; every other run is
listed from its catalogue row alone. A listing of live statuses only (the reaper,
reconcile, ``spherescope status``, shutdown) reads the small JSON files of the
catalogue and never starts Arrow: it runs in worker processes that fork.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from db.catalogue import journal
from db.catalogue.lazy_record import JSON_FIELDS, TIME_FIELDS, gc_paused, records_from_columns
from db.catalogue.rows import DEFAULT_PROJECT, record_of, row_of
from db.file_catalogue import FileCatalogue
from db.records import RunRecord

#: Statuses whose runs are read from their folders when listed.
REFRESHED = frozenset({"queued", "running"})
#: The catalogue columns a record is built from.
LISTED = ("run_id", "name", "kind", "status", "status_message", "progress_step",
          "progress_total", "device", "host", "tags", "notes", "sweep_id",
          *TIME_FIELDS, *JSON_FIELDS)  # fmt: skip


def _matches(row: dict[str, Any], filters: dict[str, Any]) -> bool:
    statuses: Collection[str] = filters["statuses"]
    if statuses and row.get("status") not in statuses:
        return False
    for key in ("kind", "sweep_id"):
        if filters[key] is not None and row.get(key) != filters[key]:
            return False
    project = filters["project"]
    if project is not None and (row.get("project") or DEFAULT_PROJECT) != project:
        return False
    archived = filters["archived"]
    if archived is not None and bool(row.get("archived")) != archived:
        return False
    if filters["tag"] is not None and filters["tag"] not in (row.get("tags") or []):
        return False
    needle = filters["needle"]
    if needle:
        haystack = " ".join(
            [row.get("name") or "", row["run_id"], row.get("notes") or "", *(row.get("tags") or [])]
        )
        if needle not in haystack.lower():
            return False
    return True


def _fresh(catalogue: FileCatalogue, row: dict[str, Any]) -> dict[str, Any]:
    return row_of(catalogue, row["run_id"]) if row.get("status") in REFRESHED else row


def list_records(catalogue: FileCatalogue, **filters: Any) -> list[RunRecord]:
    """Records matching ``filters`` (statuses, kind, sweep_id, project, archived, tag,
    needle), newest first."""
    statuses = filters["statuses"]
    if statuses and set(statuses) <= journal.LIVE_STATUSES:
        return _live_records(catalogue, filters)
    return _table_records(catalogue, filters)


def _newest_first(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: (r.get("created_at") or 0.0, r["run_id"]), reverse=True)


def _live_records(catalogue: FileCatalogue, filters: dict[str, Any]) -> list[RunRecord]:
    """From the small JSON files only (no Arrow: see the module doc)."""
    rows = []
    for row in journal.read_live_rows(catalogue).values():
        if row.get("deleted") or not _matches(row, {**filters, "statuses": ()}):
            continue
        row = _fresh(catalogue, row)
        if not row.get("deleted") and _matches(row, filters):
            rows.append(row)
    return [record_of(row) for row in _newest_first(rows)]


def _table_records(catalogue: FileCatalogue, filters: dict[str, Any]) -> list[RunRecord]:
    """Narrowed and sorted in Arrow, then built column by column
    (``lazy_record``); runs that can still change are read again from their folders."""
    table = _narrowed(catalogue, filters)
    with gc_paused():
        columns = {name: table.column(name).to_pylist() for name in LISTED}
        keep = _kept(columns, filters)
        if keep is not None:
            columns = {name: [v for v, k in zip(values, keep, strict=True) if k]
                       for name, values in columns.items()}  # fmt: skip
        records = records_from_columns(columns)
    dropped = set()
    for index, status in enumerate(columns["status"]):
        if status in REFRESHED:  # few: what its folder says now
            row = row_of(catalogue, columns["run_id"][index])
            if row.get("deleted") or not _matches(row, filters):
                dropped.add(index)
            else:
                records[index] = record_of(row)
    return [r for i, r in enumerate(records) if i not in dropped] if dropped else records


def _kept(columns: dict[str, list[Any]], filters: dict[str, Any]) -> list[bool] | None:
    """Which rows pass the tag and search filters (None: no such filter)."""
    tag, needle = filters["tag"], filters["needle"]
    if tag is None and not needle:
        return None
    keep = []
    for name, run_id, notes, tags in zip(
        columns["name"], columns["run_id"], columns["notes"], columns["tags"], strict=True
    ):
        tags = tags or []
        ok = tag is None or tag in tags
        if ok and needle:
            ok = needle in " ".join([name or "", run_id, notes or "", *tags]).lower()
        keep.append(ok)
    return keep


def _narrowed(catalogue: FileCatalogue, filters: dict[str, Any]) -> Any:
    """The catalogue's table, narrowed in Arrow (cheap columns only) and sorted newest
    first, so only the rows listed are turned into Python objects."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from db.catalogue.snapshot import read_table

    table = read_table(catalogue)
    statuses = sorted(filters["statuses"])
    if statuses:  # every status change writes a row: the catalogue's status is current
        table = table.filter(pc.is_in(table.column("status"), pa.array(statuses)))
    for key in ("kind", "sweep_id", "project"):
        if filters[key] is not None:
            table = table.filter(pc.equal(table.column(key), filters[key]))
    if filters["archived"] is not None:
        archived = pc.fill_null(table.column("archived"), False)
        table = table.filter(archived if filters["archived"] else pc.invert(archived))
    table = table.select(list(LISTED))  # the sort moves only what records are built from
    return table.sort_by([("created_at", "descending"), ("run_id", "descending")])
