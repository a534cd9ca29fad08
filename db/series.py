"""Downsampled series for charts, computed in DuckDB.

All selected runs share one grid: the bucket width comes from the largest step (or
time) over the selected runs, so bucket ``k`` covers the same steps in every run and
curves of runs of different lengths line up. Each bucket keeps its last value and the
min and max of its finite values, so spikes survive downsampling. The step grid of
long runs is read mostly from pre-aggregated levels (``db.step_grid``, ``db.levels``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from db.file_catalogue import FileSource, catalogue_of
from db.file_stats import column_max
from db.reader import query_arrow
from db.schema import NORMS, SCALARS
from db.selection import check_max_points, check_names, check_runs, in_list
from db.step_grid import max_step, step_grid_series

SERIES_COLUMNS = ["run_id", "name", "step", "value", "min", "max", "wall_time"]

_TIME_GRID = """
WITH sel AS (SELECT run_id, name, step, value, wall_time FROM scalars WHERE {where})
, start AS (SELECT run_id, min(wall_time) AS t0 FROM sel GROUP BY run_id)
, rel AS (SELECT sel.*, wall_time - t0 AS t FROM sel JOIN start USING (run_id))
, grid AS (SELECT greatest(max(t) / $max_points, 1e-6) AS width FROM rel)
SELECT run_id, name, arg_max(step, step) AS step,
       arg_max(value, step) AS value,
       min(value) FILTER (WHERE isfinite(value)) AS min,
       max(value) FILTER (WHERE isfinite(value)) AS max,
       arg_max(wall_time, step) AS wall_time,
       least(floor(t / width), $max_points - 1) * width AS time,
       count(*) AS points
FROM rel, grid
GROUP BY run_id, name, least(floor(t / width), $max_points - 1), width
ORDER BY run_id, name, time
"""


def metric_series(
    source: FileSource,
    run_ids: str | Iterable[str],
    names: str | Iterable[str],
    *,
    max_points: int = 1000,
    x: str = "step",
    since_step: int | None = None,
    since_bucket: int = 1,
) -> pd.DataFrame:
    """Per-step scalars of several runs, at most ``max_points`` rows per (run, name)
    (for long runs at least 2/3 of it: the grid width is rounded up to a multiple of a
    pre-aggregated level, see ``db.levels.step_grid``).

    Columns run_id, name, step (the bucket's grid step), value (the bucket's last
    value), min, max, wall_time (of the last value). ``x="time"`` buckets by seconds
    since each run's first logged value instead, adds a ``time`` column (the bucket's
    start) and reports the bucket's last step. ``df.attrs["total_points"]`` maps
    (run_id, name) to the number of raw values. Unknown names give no rows.

    ``since_step``: only the values logged after that step, every one of them (no
    grid: a live page asks for the few points added since its last refresh and merges
    them into what it holds; ``min`` = ``max`` = value, ``total_points`` counts them).
    ``since_bucket`` > 1 groups them by ``step // since_bucket`` in DuckDB instead,
    each bucket as in the grid (last value, finite min and max, last wall time) at its
    last step: a run logging hundreds of steps a second sends a live page a few rows
    per refresh, not every value.
    """
    catalogue = catalogue_of(source)
    runs = check_runs(catalogue, run_ids)
    wanted = check_names(names) or []
    max_points = check_max_points(max_points)
    if x not in ("step", "time"):
        raise ValueError(f"x must be 'step' or 'time', got {x!r}")
    columns = SERIES_COLUMNS + (["time"] if x == "time" else [])
    if not runs or not wanted:
        return _empty(columns)
    if since_step is not None:
        return _since(catalogue, runs, wanted, since_step, since_bucket)
    if x == "step":
        table = step_grid_series(catalogue, runs, wanted, max_points)
    else:
        where, params = in_list("name", "n", wanted)
        params["max_points"] = max_points
        # The SQL text holds only fixed fragments and placeholders; values are bound.
        sql = _TIME_GRID.format(where=where)
        table = query_arrow(catalogue, {"scalars": (SCALARS, runs)}, sql, params)
    frame = table.to_pandas()
    totals = frame.groupby(["run_id", "name"], sort=False)["points"].sum()
    frame = frame.drop(columns="points")[columns]
    frame.attrs["total_points"] = {key: int(count) for key, count in totals.items()}
    return frame


_SINCE = """
SELECT run_id, name, step, value, value AS min, value AS max, wall_time
FROM scalars WHERE {where} AND step > $since
ORDER BY run_id, name, step
"""


_SINCE_BUCKETS = """
SELECT run_id, name, max(step) AS step, arg_max(value, step) AS value,
       min(value) FILTER (WHERE isfinite(value)) AS min,
       max(value) FILTER (WHERE isfinite(value)) AS max,
       arg_max(wall_time, step) AS wall_time, count(*) AS points
FROM scalars WHERE {where} AND step > $since
GROUP BY run_id, name, step // $bucket
ORDER BY run_id, name, step
"""


def _since(
    catalogue: FileSource, runs: list[str], names: list[str], since: int, bucket: int
) -> pd.DataFrame:
    for name, value in (("since_step", since), ("since_bucket", bucket)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    if bucket < 1:
        raise ValueError(f"since_bucket must be at least 1, got {bucket}")
    where, params = in_list("name", "n", names)
    params["since"] = since
    if bucket > 1:
        params["bucket"] = bucket
    # The SQL text holds only fixed fragments and placeholders; values are bound.
    sql = (_SINCE_BUCKETS if bucket > 1 else _SINCE).format(where=where)

    def list_files() -> dict[str, list]:
        return {"scalars": _files_past(catalogue.live_files(SCALARS, runs), since)}

    sources = {"scalars": (SCALARS, runs)}
    frame = query_arrow(catalogue, sources, sql, params, list_files=list_files).to_pandas()
    if bucket > 1:
        counts = frame.groupby(["run_id", "name"], sort=False)["points"].sum()
    else:
        counts = frame.groupby(["run_id", "name"], sort=False).size()
    frame = frame[SERIES_COLUMNS]
    frame.attrs["total_points"] = {key: int(count) for key, count in counts.items()}
    return frame


def _files_past(paths: list[Path], step: int) -> list[Path]:
    """The files that may hold steps after ``step``, by their footers' largest step
    (cached per file): a live page's poll for the few new points opened every chunk
    and level of the run in DuckDB, a quarter of its server time on a long run. A file
    without usable statistics is kept (read as before)."""
    kept = []
    for path in paths:
        try:
            top = column_max([path], "step")
        except (LookupError, OSError):
            kept.append(path)
            continue
        if top is not None and top > step:
            kept.append(path)
    return kept


def sample_norms(source: FileSource, run_id: str, *, max_points: int = 1000) -> pd.DataFrame:
    """Norms of the tracked training samples: columns step, sample, norm, at most
    ``max_points`` steps per sample (each bucket's last value, at the grid step)."""
    catalogue = catalogue_of(source)
    (run,) = check_runs(catalogue, [run_id])
    max_points = check_max_points(max_points)
    sources = {"norms": (NORMS, [run])}
    sql = """
    SELECT least(step // $width, $max_points - 1) * $width AS step, sample,
           arg_max(norm, step) AS norm
    FROM norms
    GROUP BY sample, least(step // $width, $max_points - 1)
    ORDER BY sample, step
    """
    top = max_step(catalogue, NORMS, [run])
    width = max(1, math.ceil((top + 1) / max_points)) if top is not None else 1
    params = {"max_points": max_points, "width": width}
    table = query_arrow(catalogue, sources, sql, params)
    return table.to_pandas()


def _empty(columns: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame({column: [] for column in columns})
    frame.attrs["total_points"] = {}
    return frame
