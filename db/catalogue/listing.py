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
from db.catalogue.rows import DEFAULT_PROJECT, record_of, row_of
from db.file_catalogue import FileCatalogue
from db.records import RunRecord

#: Statuses whose runs are read from their folders when listed.
REFRESHED = frozenset({"queued", "running"})


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
        candidates = journal.read_live_rows(catalogue).values()
    else:
        candidates = _full_rows(catalogue, filters)
    rows = []
    for row in candidates:
        if row.get("deleted") or not _matches(row, {**filters, "statuses": ()}):
            continue
        row = _fresh(catalogue, row)
        if not row.get("deleted") and _matches(row, filters):
            rows.append(row)
    rows.sort(key=lambda r: (r.get("created_at") or 0.0, r["run_id"]), reverse=True)
    return [record_of(row) for row in rows]


def _full_rows(catalogue: FileCatalogue, filters: dict[str, Any]) -> list[dict[str, Any]]:
    """The catalogue's rows, narrowed in Arrow first (cheap columns only), so only the
    rows listed are turned into Python objects."""
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
    return table.to_pylist()
