"""A run's logged values as TensorBoard event files (``tensorboard --logdir``).

Written with TensorBoard's own event writer (``tensorboard.summary.writer``), which
needs neither torch nor TensorFlow; the package is optional (``spherescope[tensorboard]``).
Tags: the per-step scalars under their own names (``norm/var``, ``loss/total``), the
evaluations under ``eval/`` (``eval/recall@1``), tracked-sample norms under
``sample_norm/<id>``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from db.reader import query_arrow
from db.schema import EVALS, NORMS, SCALARS
from db.selection import check_runs

if TYPE_CHECKING:
    from db.store import RunStore

EVAL_PREFIX = "eval/"
SAMPLE_NORM_PREFIX = "sample_norm/"
MISSING = 'TensorBoard export needs the tensorboard package: pip install "spherescope[tensorboard]"'


def write_tensorboard(store: RunStore, run_id: str, log_dir: str | Path) -> Path:
    """Write run ``run_id``'s scalars, evaluations and sample norms as event files in
    ``log_dir`` (created if missing); returns ``log_dir``."""
    try:
        from tensorboard.compat.proto.event_pb2 import Event
        from tensorboard.compat.proto.summary_pb2 import Summary
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
    except ImportError:
        raise ValueError(MISSING) from None
    (run,) = check_runs(store, [run_id])
    folder = Path(log_dir)
    folder.mkdir(parents=True, exist_ok=True)
    writer = EventFileWriter(str(folder), filename_suffix=f".{run}")
    try:
        for tag, step, value, wall_time in _points(store, run):
            summary = Summary(value=[Summary.Value(tag=tag, simple_value=value)])
            writer.add_event(Event(wall_time=wall_time, step=step, summary=summary))
    finally:
        writer.close()
    return folder


def _points(store: RunStore, run_id: str) -> Iterator[tuple[str, int, float, float]]:
    """(tag, step, value, wall time) of every logged value, in step order per tag."""
    scalars = _table(store, SCALARS, run_id, "name, step, value, wall_time", "name, step")
    evals = _table(store, EVALS, run_id, "name, step, value, wall_time", "name, step")
    created = store.get_run(run_id).created_at
    start_time = created.timestamp() if created is not None else 0.0
    for prefix, table in (("", scalars), (EVAL_PREFIX, evals)):
        yield from zip(
            (prefix + name for name in table["name"].to_pylist()),
            table["step"].to_pylist(),
            table["value"].to_pylist(),
            table["wall_time"].to_pylist(),
            strict=True,
        )
    norms = _table(store, NORMS, run_id, "sample, step, norm", "sample, step")
    for sample, step, norm in zip(
        norms["sample"].to_pylist(), norms["step"].to_pylist(), norms["norm"].to_pylist(),
        strict=True,
    ):  # fmt: skip
        yield f"{SAMPLE_NORM_PREFIX}{sample}", step, norm, start_time  # norms have no time


def _table(store: RunStore, table: str, run_id: str, columns: str, order: str) -> pa.Table:
    return query_arrow(store, {"t": (table, [run_id])}, f"SELECT {columns} FROM t ORDER BY {order}")
