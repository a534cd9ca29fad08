"""Checking the run ids and metric names that readers are given."""

from __future__ import annotations

from collections.abc import Iterable

from db.file_catalogue import FileSource, catalogue_of


def check_runs(source: FileSource, run_ids: str | Iterable[str]) -> list[str]:
    """Distinct run ids in the given order; ``ValueError`` for a malformed or unknown id."""
    catalogue = catalogue_of(source)
    if isinstance(run_ids, str):
        run_ids = [run_ids]
    result: list[str] = []
    for run_id in run_ids:
        if not catalogue.exists(run_id):  # exists() also rejects malformed ids
            raise ValueError(f"unknown run id {run_id!r} (no such run in {catalogue.runs_dir})")
        if run_id not in result:
            result.append(run_id)
    return result


def check_names(names: str | Iterable[str] | None) -> list[str] | None:
    """Distinct metric names in order (``None`` stays ``None``: all names)."""
    if names is None:
        return None
    if isinstance(names, str):
        names = [names]
    result: list[str] = []
    for name in names:
        if not isinstance(name, str) or not name:
            raise ValueError(f"metric names must be non-empty strings, got {name!r}")
        if name not in result:
            result.append(name)
    return result


def check_max_points(max_points: object) -> int:
    if isinstance(max_points, bool) or not isinstance(max_points, int) or max_points < 1:
        raise ValueError(f"max_points must be a positive integer, got {max_points!r}")
    return max_points


def in_list(column: str, prefix: str, values: list[str]) -> tuple[str, dict[str, str]]:
    """``column IN ($prefix0, $prefix1, ...)`` with the values bound as parameters.

    Only placeholder names go into the SQL text; an explicit IN list (rather than a
    list parameter) lets DuckDB push the filter into the Parquet scan.
    """
    if not values:
        return "FALSE", {}
    params = {f"{prefix}{i}": value for i, value in enumerate(values)}
    return f"{column} IN ({', '.join('$' + key for key in params)})", params
