"""The step grid of ``metric_series``: exact bucket min/max/last from levels and raw rows.

The grid width is chosen by ``db.levels.step_grid`` from the largest step of the
selected runs (read from Parquet footers, no scan). Each run's compacted values come
from its levels file at the grid's level (about ``1 / level`` of the rows), the chunks
written after it from raw rows; both combine exactly because the grid width is a
multiple of the level. ``use_levels=False`` reads raw rows only (same result).
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from db.file_catalogue import FileCatalogue
from db.file_stats import column_max
from db.levels import series_files, step_grid
from db.reader import query_arrow
from db.schema import SCALAR_LEVELS, SCALARS
from db.selection import in_list

# The clamp keeps rows that arrived after the width was chosen in the last bucket.
_STEP_GRID = """
WITH parts AS (
    SELECT run_id, name, step // $width AS bucket, last_step, value, min, max,
           wall_time, points
    FROM levels WHERE level = $level AND {where}
    UNION ALL
    SELECT run_id, name, step // $width AS bucket, step AS last_step, value,
           CASE WHEN isfinite(value) THEN value END AS min,
           CASE WHEN isfinite(value) THEN value END AS max,
           wall_time, 1 AS points
    FROM scalars WHERE {where}
)
SELECT run_id, name, least(bucket, $max_points - 1) * $width AS step,
       arg_max(value, last_step) AS value, min(min) AS min, max(max) AS max,
       max(wall_time) AS wall_time, sum(points)::BIGINT AS points
FROM parts
GROUP BY run_id, name, least(bucket, $max_points - 1)
ORDER BY run_id, name, step
"""


def step_grid_series(
    catalogue: FileCatalogue,
    run_ids: Sequence[str],
    names: list[str],
    max_points: int,
    *,
    use_levels: bool = True,
) -> pa.Table:
    """Columns run_id, name, step, value, min, max, wall_time, points (raw values per
    bucket), sorted by run, name and step; ``names`` must not be empty."""
    width, level = step_grid(max_step(catalogue, SCALARS, run_ids), max_points)
    use_levels = use_levels and level > 1

    def list_files() -> dict[str, list]:
        files = series_files(catalogue, run_ids, use_levels)
        return {"scalars": files.raw, "levels": files.levels}

    where, params = in_list("name", "n", names)
    params.update(max_points=max_points, width=width, level=level)
    sources = {"scalars": (SCALARS, run_ids), "levels": (SCALAR_LEVELS, run_ids)}
    # The SQL text holds only fixed fragments and placeholders; values are bound.
    sql = _STEP_GRID.format(where=where)
    return query_arrow(catalogue, sources, sql, params, list_files=list_files)


def max_step(catalogue: FileCatalogue, table: str, run_ids: Sequence[str]) -> int | None:
    """The largest step of ``table`` over the runs: from the files' footers, or by a
    scan when a footer lacks statistics or a file vanished meanwhile."""
    try:
        return column_max(catalogue.live_files(table, run_ids), "step")
    except (LookupError, OSError):
        pass
    result = query_arrow(catalogue, {"t": (table, run_ids)}, "SELECT max(step) AS top FROM t")
    return result.column("top")[0].as_py()
