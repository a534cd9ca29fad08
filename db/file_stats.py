"""Column maxima from Parquet footers, so the grid width costs no scan of the data.

Store files are immutable, so a footer read once stays right; the cache is keyed by
path, size and modification time all the same, and bounded.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

MAX_CACHED = 100_000
_lock = threading.Lock()
_cache: dict[tuple[str, str, int, int], int | None] = {}


def column_max(paths: Sequence[Path], column: str) -> int | None:
    """The largest value of an integer ``column`` over ``paths`` from the row-group
    statistics (``None`` if the files hold no rows). Raises ``LookupError`` when a
    file has no usable statistics, ``OSError`` when it cannot be read: the caller
    then scans instead."""
    top: int | None = None
    for path in paths:
        value = _file_max(path, column)
        if value is not None and (top is None or value > top):
            top = value
    return top


def _file_max(path: Path, column: str) -> int | None:
    info = os.stat(path)
    key = (str(path), column, info.st_size, info.st_mtime_ns)
    with _lock:
        if key in _cache:
            return _cache[key]
    try:
        value = _footer_max(pq.read_metadata(path), column)
    except (pa.ArrowException, ValueError) as error:
        raise LookupError(f"{path}: no footer statistics ({error})") from None
    with _lock:
        if len(_cache) >= MAX_CACHED:
            _cache.clear()
        _cache[key] = value
    return value


def _footer_max(metadata: pq.FileMetaData, column: str) -> int | None:
    index = metadata.schema.names.index(column)  # ValueError if absent
    top: int | None = None
    for group in range(metadata.num_row_groups):
        chunk = metadata.row_group(group).column(index)
        if chunk.num_values == 0:
            continue
        stats = chunk.statistics
        if stats is None or not stats.has_min_max:
            raise LookupError(f"row group {group} of {column} has no min/max statistics")
        top = stats.max if top is None else max(top, stats.max)
    return None if top is None else int(top)
