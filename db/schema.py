"""The store's tables: one Parquet schema each, shared by writers, compaction and readers."""

from __future__ import annotations

import pyarrow as pa

SCALARS = "scalars"  # per-step scalars: run_id, step, name, value, wall_time
NORMS = "norms"  # tracked-sample norms: run_id, step, sample, norm
EVALS = "evals"  # evaluation results: run_id, step, name, value, wall_time
SNAPSHOTS = "snapshots"  # embedding snapshots: run_id, step, point, label, norm, coords
CHECKPOINTS = "checkpoints"  # checkpoint files: run_id, step, path, wall_time
CURVES = "curves"  # evaluated curves (the ROC): run_id, step, name, point, x, y
# Per-bucket summaries of the compacted scalars, written by compaction (never chunks):
# one row per (level, name, step // level) with the bucket's count, last step and value,
# finite min and max, and latest wall time; see ``db.levels``.
SCALAR_LEVELS = "scalar_levels"

SCHEMAS: dict[str, pa.Schema] = {
    SCALARS: pa.schema(
        [
            ("run_id", pa.string()),
            ("step", pa.int64()),
            ("name", pa.string()),
            ("value", pa.float64()),
            ("wall_time", pa.float64()),
        ]
    ),
    NORMS: pa.schema(
        [
            ("run_id", pa.string()),
            ("step", pa.int64()),
            ("sample", pa.int64()),
            ("norm", pa.float64()),
        ]
    ),
    EVALS: pa.schema(
        [
            ("run_id", pa.string()),
            ("step", pa.int64()),
            ("name", pa.string()),
            ("value", pa.float64()),
            ("wall_time", pa.float64()),
        ]
    ),
    SNAPSHOTS: pa.schema(
        [
            ("run_id", pa.string()),
            ("step", pa.int64()),
            ("point", pa.int64()),
            ("label", pa.int64()),
            ("norm", pa.float32()),
            ("coords", pa.list_(pa.float32())),
        ]
    ),
    CHECKPOINTS: pa.schema(
        [
            ("run_id", pa.string()),
            ("step", pa.int64()),
            ("path", pa.string()),
            ("wall_time", pa.float64()),
        ]
    ),
    CURVES: pa.schema(
        [
            ("run_id", pa.string()),
            ("step", pa.int64()),
            ("name", pa.string()),
            ("point", pa.int64()),  # position along the curve, from 0
            ("x", pa.float64()),
            ("y", pa.float64()),
        ]
    ),
    SCALAR_LEVELS: pa.schema(
        [
            ("run_id", pa.string()),
            ("level", pa.int64()),  # bucket width in steps
            ("step", pa.int64()),  # the bucket's first step (a multiple of level)
            ("name", pa.string()),
            ("points", pa.int64()),  # raw values in the bucket
            ("last_step", pa.int64()),
            ("value", pa.float64()),  # the value at last_step
            ("min", pa.float64()),  # of the finite values; null if none is finite
            ("max", pa.float64()),
            ("wall_time", pa.float64()),  # the latest
        ]
    ),
}

TABLES: tuple[str, ...] = tuple(SCHEMAS)

# Compacted files are sorted by these keys so that a query for a few metric names
# skips most row groups (Parquet min/max statistics).
SORT_KEYS: dict[str, list[tuple[str, str]]] = {
    SCALARS: [("name", "ascending"), ("step", "ascending"), ("wall_time", "ascending")],
    NORMS: [("sample", "ascending"), ("step", "ascending")],
    EVALS: [("name", "ascending"), ("step", "ascending"), ("wall_time", "ascending")],
    SNAPSHOTS: [("step", "ascending"), ("point", "ascending")],
    CHECKPOINTS: [("step", "ascending"), ("wall_time", "ascending")],
    CURVES: [("name", "ascending"), ("step", "ascending"), ("point", "ascending")],
    SCALAR_LEVELS: [("level", "ascending"), ("name", "ascending"), ("step", "ascending")],
}


def empty_table(table: str) -> pa.Table:
    """A zero-row table with ``table``'s schema."""
    return SCHEMAS[table].empty_table()


def has_schema(schema: pa.Schema, table: str) -> bool:
    """Whether a file's schema carries every column of ``table`` with a compatible type."""
    expected = SCHEMAS[table]
    for fld in expected:
        index = schema.get_field_index(fld.name)
        if index < 0:
            return False
        actual = schema.field(index).type
        if actual != fld.type and not _compatible(actual, fld.type):
            return False
    return True


def _compatible(actual: pa.DataType, expected: pa.DataType) -> bool:
    if pa.types.is_string(expected):
        return (
            pa.types.is_string(actual)
            or pa.types.is_large_string(actual)
            or (pa.types.is_dictionary(actual) and pa.types.is_string(actual.value_type))
        )
    if pa.types.is_list(expected):
        return (
            pa.types.is_list(actual)
            or pa.types.is_large_list(actual)
            or (pa.types.is_fixed_size_list(actual))
        )
    return False
