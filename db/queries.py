"""The read API of the dashboard: typed functions over a ``RunStore``.

Every function takes the store first, returns a pandas DataFrame (empty, with its
columns, when there is nothing) unless noted, and raises ``ValueError`` for an unknown
run id. Reads are safe while runs are writing and compacting (see ``db.reader``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from db import run_log
from db.config_diff import diff_configs
from db.export import export_run
from db.file_catalogue import catalogue_of
from db.last_values import EVAL_SOURCE, TRAIN_SOURCE, last_values
from db.reader import query_arrow
from db.records import RunRecord
from db.schema import CHECKPOINTS, CURVES, EVALS, SCALARS, SNAPSHOTS
from db.selection import check_names, check_runs, in_list
from db.series import metric_series, sample_norms
from db.step_grid import max_step
from db.store import RunStore
from sphere_engine.catalogue import QUALIFIER

__all__ = [
    "RUN_COLUMNS",
    "checkpoints",
    "config_diff",
    "eval_names",
    "eval_series",
    "export_run",
    "final_metrics",
    "get_run",
    "last_step",
    "list_runs",
    "metric_names",
    "metric_series",
    "run_log_tail",
    "sample_norms",
    "snapshot",
    "snapshot_steps",
]

RUN_COLUMNS = [
    "run_id", "name", "kind", "status", "status_message", "progress_step", "progress_total",
    "created_at", "started_at", "finished_at", "heartbeat_at", "device", "host", "tags",
    "notes", "sweep_id", "config", "run_info", "executor",
]  # fmt: skip
_TIME_COLUMNS = ["created_at", "started_at", "finished_at", "heartbeat_at"]


# -- runs ------------------------------------------------------------------------------
def list_runs(
    store: RunStore,
    *,
    status: str | Sequence[str] | None = None,
    search: str | None = None,
    tag: str | None = None,
    sweep_id: str | None = None,
    kind: str | None = None,
) -> pd.DataFrame:
    """One row per matching run, newest first (columns ``RUN_COLUMNS``; times are UTC
    timestamps, ``tags`` a list, ``config`` and ``run_info`` dicts)."""
    records = store.list_runs(status=status, search=search, tag=tag, sweep_id=sweep_id, kind=kind)
    rows = [{c: getattr(r, c) for c in RUN_COLUMNS} for r in records]
    frame = pd.DataFrame(rows, columns=RUN_COLUMNS)
    for column in _TIME_COLUMNS:
        frame[column] = pd.to_datetime(frame[column], utc=True).astype("datetime64[us, UTC]")
    for column in ("progress_step", "progress_total"):
        frame[column] = frame[column].astype("Int64")
    return frame


def get_run(store: RunStore, run_id: str) -> RunRecord:
    return store.get_run(run_id)


# -- names -----------------------------------------------------------------------------
def metric_names(store: RunStore, run_ids: str | Iterable[str]) -> list[str]:
    """Names of the per-step scalars logged by any of the runs, sorted."""
    return _names(store, run_ids, SCALARS)


def eval_names(store: RunStore, run_ids: str | Iterable[str]) -> list[str]:
    """Names of the evaluation metrics logged by any of the runs, sorted."""
    return _names(store, run_ids, EVALS)


def _names(store: RunStore, run_ids: str | Iterable[str], table: str) -> list[str]:
    runs = check_runs(store, run_ids)
    if not runs:
        return []
    result = query_arrow(store, {"t": (table, runs)}, "SELECT DISTINCT name FROM t ORDER BY 1")
    return result.column("name").to_pylist()


# -- evaluations and final values --------------------------------------------------------
def eval_series(
    store: RunStore, run_ids: str | Iterable[str], names: str | Iterable[str] | None = None
) -> pd.DataFrame:
    """Evaluation results: columns run_id, step, name, value (sorted by run, name, step)."""
    runs = check_runs(store, run_ids)
    wanted = check_names(names)
    where, params = ("TRUE", {}) if wanted is None else in_list("name", "n", wanted)
    sql = f"SELECT run_id, step, name, value FROM evals WHERE {where} ORDER BY run_id, name, step"
    return query_arrow(store, {"evals": (EVALS, runs)}, sql, params).to_pandas()


_QUALIFIER = QUALIFIER


def final_metrics(
    store: RunStore, run_ids: str | Iterable[str], names: str | Iterable[str] | None = None
) -> pd.DataFrame:
    """One row per run (in the given order): run_id, name (the run's name), then one
    column per metric with its last value. Missing values are NaN.

    The same key can be logged per training step (the last training batch, scalars
    table) and at evaluation (the test set, evals table), and the two mean different
    things, so a column says which it is: ``eval:norm/var`` is the last evaluation,
    ``train:norm/var`` the last logged step. ``names=None``: every metric of the runs,
    qualified (evaluations first). A bare name (``recall@1``) reads the one table that
    holds it for these runs; a bare name found in both is a ``ValueError`` (qualify it).
    """
    runs = check_runs(store, run_ids)
    wanted = check_names(names)
    keys = None if wanted is None else sorted({_bare(n) for n in wanted})
    last = last_values(store, runs, keys)
    if wanted is None:
        last = last.sort_values(["source", "name"], key=_evaluations_first)
        order = list(dict.fromkeys(last["column"]))
    else:
        order = wanted
        last = _resolve_bare_names(last, wanted)
    wide = last.pivot(index="run_id", columns="column", values="value") if len(last) else None
    frame = pd.DataFrame({"run_id": runs, "name": [store.get_run(r).name for r in runs]})
    for column in order:
        if wide is not None and column in wide.columns:
            frame[column] = wide[column].reindex(runs).to_numpy(dtype=float)
        else:
            frame[column] = np.nan
    return frame


def _bare(name: str) -> str:
    source, separator, key = name.partition(_QUALIFIER)
    return key if separator and source in (EVAL_SOURCE, TRAIN_SOURCE) else name


def _evaluations_first(column: pd.Series) -> pd.Series:
    return column.map({EVAL_SOURCE: "0", TRAIN_SOURCE: "1"}).fillna(column)


def _resolve_bare_names(last: pd.DataFrame, wanted: list[str]) -> pd.DataFrame:
    """Rows under the column names asked for: bare names read their one table."""
    bare = [n for n in wanted if _bare(n) == n]
    parts = [last]
    for name in bare:
        rows = last[last["name"] == name]
        found = sorted(set(rows["source"]))
        if len(found) > 1:
            raise ValueError(
                f"metric {name!r} is logged per training step and at evaluation; ask for "
                f"'{TRAIN_SOURCE}{_QUALIFIER}{name}' or '{EVAL_SOURCE}{_QUALIFIER}{name}'"
            )
        parts.append(rows.assign(column=name))
    return pd.concat(parts, ignore_index=True)


def config_diff(store: RunStore, run_ids: str | Iterable[str]) -> pd.DataFrame:
    """Rows = dotted config keys whose values differ: a ``key`` column, then one
    column per run id with the value as text (``None`` where the run lacks the key)."""
    runs = check_runs(store, run_ids)
    return diff_configs({run_id: store.get_run(run_id).config for run_id in runs})


# -- snapshots and checkpoints -------------------------------------------------------------
def snapshot_steps(store: RunStore, run_id: str) -> list[int]:
    """Steps at which the run logged an embedding snapshot, ascending."""
    runs = check_runs(store, [run_id])
    result = query_arrow(
        store, {"s": (SNAPSHOTS, runs)}, "SELECT DISTINCT step FROM s ORDER BY step"
    )
    return [int(step) for step in result.column("step").to_pylist()]


def snapshot(store: RunStore, run_id: str, step: int) -> pd.DataFrame:
    """The snapshot at ``step``: columns point, label, norm, c0..c{d-1} (raw
    coordinates). Empty (point, label, norm) if the run has no snapshot there."""
    runs = check_runs(store, [run_id])
    if isinstance(step, bool) or not isinstance(step, (int, np.integer)):
        raise ValueError(f"step must be an integer, got {step!r}")
    result = query_arrow(
        store,
        {"s": (SNAPSHOTS, runs)},
        "SELECT point, label, norm, coords FROM s WHERE step = $step ORDER BY point",
        {"step": int(step)},
    )
    frame = result.select(["point", "label", "norm"]).to_pandas()
    if result.num_rows:
        coords = result.column("coords").combine_chunks()
        dim = len(coords[0])
        values = coords.flatten().to_numpy(zero_copy_only=False).reshape(-1, dim)
        columns = pd.DataFrame(values, columns=[f"c{i}" for i in range(dim)])
        frame = pd.concat([frame, columns], axis=1)
    return frame


def checkpoints(store: RunStore, run_id: str) -> pd.DataFrame:
    """Checkpoint files the run reported: columns step, path, wall_time."""
    runs = check_runs(store, [run_id])
    sql = "SELECT step, path, wall_time FROM c ORDER BY step, wall_time"
    return query_arrow(store, {"c": (CHECKPOINTS, runs)}, sql).to_pandas()


def latest_curves(store: RunStore, run_ids: str | Iterable[str], name: str) -> pd.DataFrame:
    """Each run's curve ``name`` (e.g. ``verification/roc``) at the last step it was
    evaluated: columns run_id, step, point, x, y (sorted by run and point)."""
    runs = check_runs(store, run_ids)
    (wanted,) = check_names(name) or [name]
    sql = (
        "SELECT run_id, step, point, x, y FROM c WHERE name = $name AND (run_id, step) IN "
        "(SELECT run_id, max(step) FROM c WHERE name = $name GROUP BY run_id) "
        "ORDER BY run_id, point"
    )
    return query_arrow(store, {"c": (CURVES, runs)}, sql, {"name": wanted}).to_pandas()


def run_log_tail(store: RunStore, run_id: str, max_bytes: int = 20_000) -> str:
    """The end of the run's own log (stdout, stderr and logging of the process that
    ran it, see ``db.run_log``); "" when it has none."""
    (run,) = check_runs(store, [run_id])
    return run_log.tail(store.run_dir(run), max_bytes)


def last_step(store: RunStore, run_id: str) -> int | None:
    """The largest step of the run's per-step scalars (None before the first), from
    the files' footers: cheap enough to ask on every live refresh."""
    runs = check_runs(store, [run_id])
    return max_step(catalogue_of(store), SCALARS, runs)
