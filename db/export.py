"""Export of one run's logged values to a CSV or Parquet file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from db.atomic import write_atomic
from db.reader import query_arrow
from db.schema import EVALS, NORMS, SCALARS, SORT_KEYS
from db.selection import check_runs

if TYPE_CHECKING:
    from db.file_catalogue import FileSource

EXPORTABLE = (SCALARS, EVALS, NORMS)


def export_run(
    store: FileSource,
    run_id: str,
    path: str | os.PathLike[str],
    fmt: str = "csv",
    *,
    table: str = SCALARS,
) -> Path:
    """Write every row of one table of ``run_id`` (default: the per-step scalars,
    columns run_id, step, name, value, wall_time) to ``path``; returns the path."""
    (run,) = check_runs(store, [run_id])
    if fmt not in ("csv", "parquet"):
        raise ValueError(f"fmt must be 'csv' or 'parquet', got {fmt!r}")
    if table not in EXPORTABLE:
        raise ValueError(f"table must be one of {', '.join(EXPORTABLE)}, got {table!r}")
    target = Path(path)
    if not target.parent.is_dir():
        raise ValueError(f"export: folder {str(target.parent)!r} does not exist")
    data = query_arrow(store, {"t": (table, [run])}, "SELECT * FROM t")
    data = data.sort_by(SORT_KEYS[table])
    if fmt == "csv":
        write_atomic(target, lambda temp: pa_csv.write_csv(data, temp), fsync=False)
    else:
        write_atomic(target, lambda temp: pq.write_table(data, temp), fsync=False)
    return target
