"""Writing one immutable Parquet file of a table (a chunk or a compacted file)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from db.atomic import write_atomic
from db.schema import SCHEMAS


def write_table_file(path: Path, table_name: str, table: pa.Table, *, fsync: bool = True) -> None:
    """Write ``table`` (cast to the table's schema) to ``path`` atomically."""
    table = table.cast(SCHEMAS[table_name]) if table.schema != SCHEMAS[table_name] else table
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(
        path,
        lambda temp: pq.write_table(
            table, temp, compression="zstd", compression_level=1, row_group_size=256 * 1024
        ),
        fsync=fsync,
    )
