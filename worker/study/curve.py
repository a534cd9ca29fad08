"""A run's validation curve (one evaluation metric) as the coordinator reads it: its
live evaluation files read directly with PyArrow, three columns, the metric's rows
kept. The shared reader (``db.queries.eval_series``) runs DuckDB, whose scan threads
and result conversion cost the coordinator more CPU than the few points it needs; a
file it cannot read that way (compacted meanwhile, corrupt) falls back to that reader,
which lists again and quarantines."""

from __future__ import annotations

import math

import pyarrow.parquet as pq

from db.file_catalogue import catalogue_of
from db.schema import EVALS
from db.store import RunStore


def metric_points(store: RunStore, run_id: str, metric: str) -> list[tuple[int, float]]:
    """The run's finite ``(step, value)`` points of ``metric``, by step."""
    try:
        rows = []
        for path in catalogue_of(store).live_files(EVALS, [run_id]):
            # ParquetFile, not read_table: a filter (or read_table at all) imports
            # pyarrow.dataset, 0.25 s of CPU, more than every read of a study's curves
            table = pq.ParquetFile(path).read(columns=["step", "name", "value"])
            steps, names, values = (table.column(c).to_pylist() for c in ("step", "name", "value"))
            rows.extend((s, v) for s, n, v in zip(steps, names, values, strict=True) if n == metric)
    except (OSError, ValueError, KeyError):
        from db import queries  # DuckDB and pandas: only when the light read fails

        frame = queries.eval_series(store, run_id, [metric])
        rows = list(zip(frame["step"], frame["value"], strict=True))
    points = [(int(s), float(v)) for s, v in rows if v is not None and math.isfinite(v)]
    return sorted(points, key=lambda point: point[0])
