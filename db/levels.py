"""Pre-aggregated scalar buckets ("levels"): what makes long-run comparisons fast.

When compaction writes a compacted scalars file (``scalars/compact-*.parquet``) it
first writes a file of the same name in ``scalar_levels``: for each level ``L`` in
``LEVELS`` and each (name, step // L) bucket, the count, last step and value, finite
min and max, and latest wall time of that compacted file's values. These combine
exactly (min of mins, max of maxes, value at the largest last step, sum of counts), so
a grid bucket whose width is a multiple of ``L`` is computed from about ``1 / L`` of
the rows, and the levels of a run's several compacted files (compacted in tiers)
combine like those of one.

A levels file is used only with the live compacted scalars file of the same name: it
summarises exactly that file. Chunks are read raw, and so is a compacted file without
its levels file (being compacted right now, or compacted by an older version:
``store.compact`` backfills it), which gives the same result.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from db import layout
from db.file_catalogue import FileCatalogue
from db.reader import cursor
from db.schema import SCALAR_LEVELS, SCALARS, SCHEMAS

LEVELS: tuple[int, ...] = (8, 64, 512, 4096)
# A level is used only if rounding the grid width up to a multiple of it widens the
# buckets by at most this fraction: a series keeps at least 2/3 of max_points buckets.
MAX_WIDENING = 0.5

# The finest level from the raw rows, the coarser ones from it (LEVELS[0] divides each).
_BUILD = """
WITH finest AS MATERIALIZED (
    SELECT name, step // $finest * $finest AS step, count(*) AS points,
           max(step) AS last_step, arg_max(value, step) AS value,
           min(value) FILTER (WHERE isfinite(value)) AS min,
           max(value) FILTER (WHERE isfinite(value)) AS max,
           max(wall_time) AS wall_time
    FROM data GROUP BY name, step // $finest
)
SELECT $run_id AS run_id, $finest AS level, step, name, points, last_step, value, min, max,
       wall_time
FROM finest
UNION ALL
SELECT $run_id, level, step // level * level, name, sum(points), max(last_step),
       arg_max(value, last_step), min(min), max(max), max(wall_time)
FROM finest CROSS JOIN (SELECT unnest($coarser) AS level) AS levels
GROUP BY level, name, step // level
ORDER BY level, name, step
"""


def build_levels(run_id: str, scalars: pa.Table) -> pa.Table:
    """The ``scalar_levels`` rows summarising ``scalars`` (rows of run ``run_id``)."""
    params = {"run_id": run_id, "finest": LEVELS[0], "coarser": list(LEVELS[1:])}
    con = cursor()
    try:
        con.register("data", scalars)
        result = con.sql(_BUILD, params=params).to_arrow_table()
    finally:
        con.close()
    return result.cast(SCHEMAS[SCALAR_LEVELS])


def step_grid(top: int | None, max_points: int) -> tuple[int, int]:
    """(bucket width, level) of the step grid for steps 0..``top``.

    The width is the smallest that fits ``max_points`` buckets, rounded up to a
    multiple of the coarsest level that widens it by at most ``MAX_WIDENING``; level
    1 (read raw values only) when no level qualifies (short runs). The grid depends
    on ``top`` and ``max_points`` only, never on which runs are compacted.
    """
    if top is None:
        return 1, 1
    narrowest = max(1, math.ceil((top + 1) / max_points))
    for level in sorted(LEVELS, reverse=True):
        width = -(-narrowest // level) * level
        if width <= narrowest * (1 + MAX_WIDENING):
            return width, level
    return narrowest, 1


@dataclass(frozen=True)
class SeriesFiles:
    """What a step-grid query reads: levels files, and raw scalars files for the rest."""

    levels: list[Path]
    raw: list[Path]


def series_files(catalogue: FileCatalogue, run_ids: Sequence[str], use_levels: bool) -> SeriesFiles:
    """Per run: the levels file of each compacted scalars file that has one, and the
    other live scalars files raw. Known-bad files are left out."""
    levels: list[Path] = []
    raw: list[Path] = []
    for run_id in run_ids:
        summaries = catalogue.table_dir(run_id, SCALAR_LEVELS)
        for path in catalogue.live_files(SCALARS, [run_id]):
            summary = summaries / path.name
            if (
                use_levels
                and layout.compact_range(path.name) is not None
                and not catalogue.is_bad_file(summary)
                and summary.is_file()
            ):
                levels.append(summary)
            else:
                raw.append(path)
    return SeriesFiles(levels, raw)
