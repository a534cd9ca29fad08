"""The Runs page's questions, answered in the catalogue (server-side): search, filters,
sort by any column, final metric or config key, grouping with counts and mean ± std,
and paging. The browser gets one page of rows, never the whole store.

Every function takes the store first and runs one DuckDB query over the catalogue's
Arrow table (``db.catalogue.snapshot.read_table``); no run folder is opened except
those of runs whose writer is in flight.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow.compute as pc

from db.catalogue.rows import COLUMNS, row_of
from db.catalogue.snapshot import read_table
from db.reader import cursor
from sphere_engine.catalogue import QUALIFIER, Source

if TYPE_CHECKING:
    from db.store import RunStore

#: Columns a page row carries (the bulky JSON run info stays in the catalogue).
PAGE_COLUMNS = [c for c in COLUMNS if c not in ("run_info", "deleted", "read_ns")]
TIME_COLUMNS = ("created_at", "started_at", "finished_at", "heartbeat_at")
GROUP_COLUMNS = ("sweep_id", "study_id", "project", "status", "kind", "host")
CONFIG_PREFIX = "config."
_METRIC_PREFIXES = tuple(f"{s.value}{QUALIFIER}" for s in Source)


@dataclass(frozen=True)
class RunPage:
    """One page of runs (``rows``) and how many matched before paging (``total``)."""

    rows: pd.DataFrame
    total: int


def _json_path(dotted: str) -> str:
    parts = [p for p in dotted.split(".") if p]
    if not parts:
        raise ValueError(f"config key {dotted!r} is empty")
    return "$" + "".join("." + json.dumps(p) for p in parts)


def _value_expression(key: str, params: dict[str, Any], name: str) -> str:
    """SQL for a sortable / groupable value: a column, ``eval:<key>`` / ``train:<key>``
    (the final metric) or ``config.<dotted.key>``."""
    if key in COLUMNS and key not in ("tags",):
        return f'"{key}"'
    if key.startswith(_METRIC_PREFIXES):
        params[name] = "$." + json.dumps(key)
        return f"TRY_CAST(json_extract_string(metrics, ${name}) AS DOUBLE)"
    if key.startswith(CONFIG_PREFIX):
        params[name] = _json_path(key[len(CONFIG_PREFIX) :])
        return f"json_extract_string(config, ${name})"
    raise ValueError(
        f"sort/group key {key!r} is unknown: a catalogue column, 'eval:<metric>', "
        "'train:<metric>' or 'config.<dotted.key>'"
    )


def _where(filters: dict[str, Any], params: dict[str, Any]) -> str:
    clauses = ["TRUE"]
    if filters.get("project") is not None:
        clauses.append("project = $project")
        params["project"] = filters["project"]
    archived = filters.get("archived", False)
    if archived is not None:
        clauses.append("coalesce(archived, FALSE) = $archived")
        params["archived"] = bool(archived)
    status = filters.get("status") or ()
    if isinstance(status, str):
        status = (status,)
    if status:
        clauses.append("list_contains($statuses, status)")
        params["statuses"] = list(status)
    for key in ("kind", "sweep_id", "study_id"):
        if filters.get(key) is not None:
            clauses.append(f"{key} = ${key}")
            params[key] = filters[key]
    if filters.get("run_ids") is not None:
        clauses.append("list_contains($run_ids, run_id)")
        params["run_ids"] = list(filters["run_ids"])
    if filters.get("tag") is not None:
        clauses.append("list_contains(tags, $tag)")
        params["tag"] = filters["tag"]
    needle = (filters.get("search") or "").strip().lower()
    if needle:
        clauses.append(
            "contains(lower(concat_ws(' ', name, run_id, notes, array_to_string(tags, ' '), "
            "config)), $needle)"
        )
        params["needle"] = needle
    config: Mapping[str, Any] = filters.get("config") or {}
    for index, (key, value) in enumerate(sorted(config.items())):
        params[f"cp{index}"] = _json_path(key)
        params[f"cv{index}"] = value if isinstance(value, str) else json.dumps(value)
        clauses.append(f"json_extract_string(config, $cp{index}) = $cv{index}")
    return " AND ".join(clauses)


_FILTERS = (
    "project", "search", "status", "kind", "tag", "sweep_id", "study_id", "archived", "run_ids",
)  # fmt: skip


def _check_filters(caller: str, filters: Mapping[str, Any]) -> None:
    """``ValueError`` naming ``caller`` for a filter no listing knows."""
    unknown = set(filters) - set(_FILTERS) - {"config"}
    if unknown:
        raise ValueError(f"{caller}: unknown filter(s) {sorted(unknown)}")


def _run(store: RunStore, sql: str, params: dict[str, Any]) -> pd.DataFrame:
    connection = cursor()  # the process's DuckDB database: not a new one per query
    try:
        connection.register("runs", read_table(store.files))
        return connection.execute(sql, params).df()
    finally:
        connection.close()


def query_runs(
    store: RunStore,
    *,
    project: str | None = None,
    search: str = "",
    status: str | Sequence[str] = (),
    kind: str | None = None,
    tag: str | None = None,
    sweep_id: str | None = None,
    study_id: str | None = None,
    archived: bool | None = False,
    config: Mapping[str, Any] | None = None,
    sort: str = "created_at",
    descending: bool = True,
    offset: int = 0,
    limit: int = 50,
) -> RunPage:
    """One page of the runs matching every filter, sorted by ``sort`` (a column, a
    final metric ``eval:<key>`` / ``train:<key>``, or ``config.<dotted.key>``; runs
    without the value last). ``archived``: False hides archived runs (the default
    view), True lists only them, None both. ``search``: substring of name, id, notes,
    tags or config values, any case."""
    if limit < 0 or offset < 0:
        raise ValueError(f"paging: offset {offset} and limit {limit} must be >= 0")
    params: dict[str, Any] = {}
    filters = dict(
        project=project, search=search, status=status, kind=kind, tag=tag,
        sweep_id=sweep_id, study_id=study_id, archived=archived, config=config,
    )  # fmt: skip
    where = _where(filters, params)
    order = _value_expression(sort, params, "sort")
    direction = "DESC" if descending else "ASC"
    columns = ", ".join(f'"{c}"' for c in PAGE_COLUMNS)
    sql = f"""
        SELECT {columns} FROM runs WHERE {where}
        ORDER BY {order} {direction} NULLS LAST, run_id {direction}
        LIMIT {int(limit)} OFFSET {int(offset)}
    """  # a top-N: a window count over every row made DuckDB keep every wide row
    frame = _run(store, sql, params)
    total = _count(store, where, params)
    for column in TIME_COLUMNS:
        frame[column] = pd.to_datetime(frame[column], unit="s", utc=True)
    return RunPage(frame.reset_index(drop=True), total)


def _count(store: RunStore, where: str, params: dict[str, Any]) -> int:
    used = {k: v for k, v in params.items() if re.search(rf"\${k}\b", where)}
    return int(_run(store, f"SELECT count(*) AS n FROM runs WHERE {where}", used)["n"].iloc[0])


def group_runs(
    store: RunStore, by: str, *, metric: str | None = None, **filters: Any
) -> pd.DataFrame:
    """Groups of the matching runs: columns group, runs, mean, std of ``metric`` (a
    final metric key, default each run's main value). ``by``: a catalogue column
    (sweep_id, study_id, project, status, kind, host), ``tag`` (a run counts in each
    of its tags) or ``config.<dotted.key>``."""
    _check_filters("group_runs", filters)
    params: dict[str, Any] = {}
    where = _where(filters, params)
    value = "main_value" if metric is None else _value_expression(metric, params, "metric")
    if by == "tag":
        source = f"(SELECT unnest(tags) AS g, {value} AS v FROM runs WHERE {where})"
    elif by in GROUP_COLUMNS or by.startswith(CONFIG_PREFIX):
        key = _value_expression(by, params, "group")
        source = f"(SELECT {key} AS g, {value} AS v FROM runs WHERE {where})"
    else:
        raise ValueError(f"group by {by!r}: choose tag, {', '.join(GROUP_COLUMNS)} or config.<key>")
    sql = f"""
        SELECT g AS "group", count(*) AS runs, avg(v) AS mean, stddev_samp(v) AS std
        FROM {source} GROUP BY g ORDER BY runs DESC, "group" NULLS LAST
    """
    return _run(store, sql, params)


def projects(store: RunStore) -> list[str]:
    """Every project with at least one run, sorted."""
    column = read_table(store.files).column("project")
    return sorted(p for p in pc.unique(column).to_pylist() if p)


def disk_usage(store: RunStore, project: str | None = None) -> int:
    """Bytes held by the runs (of ``project``), as last measured (at each run's end,
    by a rebuild or by ``spherescope store gc``); the trash is not counted."""
    table = read_table(store.files)
    if project is not None:
        table = table.filter(pc.equal(table.column("project"), project))
    return int(pc.sum(table.column("disk_bytes")).as_py() or 0)


#: SQL: the run's stored findings include a critical one (``db.findings.run_untrusted``).
UNTRUSTED = (
    "coalesce(findings > 0 AND regexp_matches(json_extract_string(run_info, '$.findings'), "
    '\'"severity":\\s*"critical"\'), FALSE)'
)

#: ``runs_frame`` columns holding JSON text in the catalogue, decoded to dicts.
_JSON_COLUMNS = ("config", "run_info", "executor", "extra")


def runs_frame(
    store: RunStore,
    *,
    limit: int | None = None,
    offset: int = 0,
    sort: str = "created_at",
    descending: bool = True,
    untrusted_last: bool = False,
    **filters: Any,
) -> tuple[pd.DataFrame, int]:
    """The matching runs as a frame (the columns of ``db.queries.RUN_COLUMNS`` plus the
    catalogue's project, archived, disk_bytes, main_metric, main_value, metrics (a
    dict), findings), newest first, at most ``limit`` of them; and how many matched.
    Filters as ``query_runs``; ``offset``: rows skipped (paging). ``untrusted_last``:
    runs with a stored critical finding (their result cannot be trusted) after the
    others, whatever the sort. Queued and running runs are read again from their
    folders (their progress and heartbeat move); every other row is the catalogue's."""
    if offset < 0 or (limit is not None and limit < 0):
        raise ValueError(f"paging: offset {offset} and limit {limit} must be >= 0")
    _check_filters("runs_frame", filters)
    params: dict[str, Any] = {}
    where = _where({"archived": False, **filters}, params)
    order = _value_expression(sort, params, "sort")
    direction = "DESC" if descending else "ASC"
    page = ("" if limit is None else f"LIMIT {int(limit)}") + f" OFFSET {int(offset)}"
    first = f"{UNTRUSTED} ASC, " if untrusted_last else ""
    columns = ", ".join(f'"{c}"' for c in COLUMNS if c not in ("deleted", "read_ns"))
    sql = f"""
        SELECT {columns} FROM runs WHERE {where}
        ORDER BY {first}{order} {direction} NULLS LAST, run_id {direction} {page}
    """
    rows = _rows(store, sql, params)
    total = _count(store, where, params)
    for index, row in enumerate(rows):
        if row["status"] in ("queued", "running"):  # their progress and heartbeat move
            fresh = row_of(store.files, row["run_id"])
            rows[index] = row if fresh.get("deleted") else {**row, **fresh}
        for column in (*_JSON_COLUMNS, "metrics"):
            text = rows[index][column]
            rows[index][column] = json.loads(text) if isinstance(text, str) and text else {}
        rows[index]["tags"] = list(rows[index]["tags"] or [])
    names = [c for c in COLUMNS if c not in ("deleted", "read_ns")]
    frame = pd.DataFrame(rows, columns=names)
    for column in TIME_COLUMNS:
        frame[column] = pd.to_datetime(frame[column], unit="s", utc=True).astype(
            "datetime64[us, UTC]"
        )
    for column in ("progress_step", "progress_total"):
        frame[column] = frame[column].astype("Int64")
    return frame, total


def _rows(store: RunStore, sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    connection = cursor()
    try:
        connection.register("runs", read_table(store.files))
        return connection.sql(sql, params=params).to_arrow_table().to_pylist()
    finally:
        connection.close()


def tag_names(store: RunStore, project: str | None = None) -> list[str]:
    """Every tag of any run (of ``project``), sorted."""
    params: dict[str, Any] = {}
    where = _where({"project": project, "archived": None}, params)
    sql = f"SELECT DISTINCT unnest(tags) AS tag FROM runs WHERE {where} ORDER BY tag"
    return [str(tag) for tag in _run(store, sql, params)["tag"] if tag]


def sweep_ids(store: RunStore, project: str | None = None) -> list[str]:
    """Sweep ids with at least one run (of ``project``), newest first."""
    params: dict[str, Any] = {}
    where = _where({"project": project, "archived": None}, params)
    sql = f"""SELECT sweep_id FROM runs WHERE {where} AND sweep_id IS NOT NULL
              AND sweep_id <> '' GROUP BY sweep_id ORDER BY max(created_at) DESC"""
    return [str(sweep) for sweep in _run(store, sql, params)["sweep_id"]]


#: Columns of ``pick_list``: what a run picker labels its options with and picks by.
PICK_COLUMNS = ("run_id", "name", "kind", "status", "sweep_id", "created_at")
#: SQL: a training run that has (or is producing) results, what pickers offer first.
_WITH_RESULTS = "(kind = 'train' AND status IN ('running', 'finished', 'cancelled'))"


def pick_list(
    store: RunStore, *, results_first: bool = False, limit: int | None = 50, **filters: Any
) -> pd.DataFrame:
    """A run picker's options (columns ``PICK_COLUMNS``): the matching runs, newest
    first, at most ``limit``; ``results_first``: training runs with results before the
    others. Filters as ``runs_frame`` (``archived`` defaults to False) plus ``run_ids``
    (these runs only, whichever project and archived state they have)."""
    if limit is not None and limit < 0:
        raise ValueError(f"paging: limit {limit} must be >= 0")
    _check_filters("pick_list", filters)
    params: dict[str, Any] = {}
    where = _where({"archived": False, **filters}, params)
    first = f"{_WITH_RESULTS} DESC, " if results_first else ""
    columns = ", ".join(f'"{c}"' for c in PICK_COLUMNS)
    sql = f"""SELECT {columns} FROM runs WHERE {where}
              ORDER BY {first}created_at DESC, run_id DESC
              {"" if limit is None else f"LIMIT {int(limit)}"}"""
    frame = _run(store, sql, params)
    frame["created_at"] = pd.to_datetime(frame["created_at"], unit="s", utc=True)
    return frame.reset_index(drop=True)


def config_keys(store: RunStore, project: str | None = None) -> list[str]:
    """Every dotted config key of any run (of ``project``), flattened as
    ``db.config_diff.flatten`` does (lists and empty tables are leaves): the keys whose
    value differs between runs first, then the others, each sorted."""
    params: dict[str, Any] = {}
    where = _where({"project": project, "archived": None}, params)
    # json_tree walks every node; a leaf of the flattening is a member of an object
    # (no array index in its path) that is not itself a non-empty object
    sql = f"""
        SELECT replace(substr(t.fullkey, 3), '"', '') AS key,
               count(DISTINCT t.value) > 1 AS varying
        FROM (SELECT config FROM runs WHERE {where} AND config IS NOT NULL) AS r,
             json_tree(r.config) AS t
        WHERE t.key IS NOT NULL AND NOT contains(t.fullkey, '[')
              AND (t.type <> 'OBJECT' OR t.value = '{{}}')
        GROUP BY 1 ORDER BY varying DESC, key
    """
    return [str(key) for key in _run(store, sql, params)["key"]]
