"""``StoreTracker``: the run store's implementation of ``sphere_engine.tracking.Tracker``.

Values are buffered in columnar arrays (a few list appends per call) and written as
one Parquet chunk per table at most every ``flush_interval`` seconds (checked on each
call; ``watched_flush_interval`` while a live page watches the run, see
``RunStore.mark_watched``), on ``flush()``, or when the buffer grows past
``max_buffer_rows``. Each flush also writes the heartbeat with the last progress. Every
``compact_every`` flushes (a watched run's count as fractions: the same cadence in time)
the tracker compacts its run in tiers, which bounds the number of files a reader opens,
on a thread of its own: the training step that triggers it does not wait for it (a
GPU would idle meanwhile), and a compaction still running is not started twice. A failed
write keeps the buffered rows (the next flush retries them), notes the error in the
run's status file and raises ``StoreWriteError``: nothing is dropped silently.

One tracker writes a run at a time (the worker running it). It takes the store's
``FileCatalogue`` like every module of ``db`` (``RunStore.tracker`` makes one).
"""

from __future__ import annotations

import logging
import operator
import threading
import time
import uuid
from array import array
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from db import layout, run_index, run_status, user_fields
from db.chunks import write_table_file
from db.file_catalogue import FileCatalogue
from db.named_values import NamedValues, constant_strings
from db.schema import CHECKPOINTS, CURVES, EVALS, NORMS, SCALARS, SNAPSHOTS, TABLES
from db.throttle import throttled
from db.write_errors import StoreWriteError, describe_write_error, is_no_space

__all__ = ["StoreTracker", "StoreWriteError"]

#: Seconds between flushes while a live Run page watches the run (``watched_flush_interval``):
#: the page's lag from a step logged to drawn is mostly waiting for the next flush (0.5 s
#: gave lag p90 1.92/2.02 s at a 1.75 s poll, 0.25 s 1.79 s; bench/dashboard_speed).
WATCHED_FLUSH_S = 0.25
#: How often the tracker looks at the run's watched marker (one ``stat``).
WATCH_POLL_S = 1.0

log = logging.getLogger(__name__)


def _check_step(step: Any) -> int:
    try:
        step = operator.index(step)
    except TypeError:
        raise ValueError(f"step must be an integer, got {step!r}") from None
    if step < 0:
        raise ValueError(f"step must be >= 0, got {step}")
    return step


class StoreTracker:
    """Writes one run's logged values into the store of ``files``. Use
    ``store.tracker(run_id)``."""

    def __init__(
        self,
        files: FileCatalogue,
        run_id: str,
        flush_interval: float = 1.0,
        *,
        max_buffer_rows: int = 4_000_000,
        compact_every: int = 30,
        fsync: bool = True,
        watched_flush_interval: float = WATCHED_FLUSH_S,
    ) -> None:
        if not flush_interval >= 0:
            raise ValueError(f"flush_interval must be >= 0 seconds, got {flush_interval!r}")
        if not watched_flush_interval >= 0:
            raise ValueError(
                f"watched_flush_interval must be >= 0 seconds, got {watched_flush_interval!r}"
            )
        if compact_every < 0:
            raise ValueError(f"compact_every must be >= 0 (0: never), got {compact_every!r}")
        if max_buffer_rows < 1:
            raise ValueError(f"max_buffer_rows must be >= 1, got {max_buffer_rows!r}")
        run_index.get_run(files, run_id)  # ValueError for an unknown run
        self.files = files
        self.run_id = run_id
        self.flush_interval = float(flush_interval)
        self.watched_flush_interval = min(float(watched_flush_interval), self.flush_interval)
        self._watched = False
        self._watched_now = throttled(
            lambda: run_status.is_watched(files, run_id), WATCH_POLL_S, latch=False
        )  # one ``stat`` at most every WATCH_POLL_S
        self.max_buffer_rows = max_buffer_rows
        self.compact_every = compact_every
        self.fsync = fsync
        self._flushes_since_compaction = 0
        self.flushes = 0  # completed flushes
        self._token = uuid.uuid4().hex[:12]
        self._seq = 1 + max(
            layout.scan_table(files.table_dir(run_id, table)).max_seq for table in TABLES
        )
        self._scalars = NamedValues()
        self._evals = NamedValues()
        self._norm_steps = array("q")
        self._norm_samples = array("q")
        self._norm_values = array("d")
        self._snapshots: list[tuple[int, np.ndarray, np.ndarray]] = []
        self._checkpoints: list[tuple[int, str, float]] = []
        self._curves: list[tuple[int, str, np.ndarray, np.ndarray]] = []
        self._progress: tuple[int | None, int | None] = (None, None)
        self._last_flush = time.monotonic()
        self._compaction: threading.Thread | None = None

    # -- Tracker protocol -----------------------------------------------------------
    def track_run_info(self, info: Mapping[str, Any]) -> None:
        user_fields.update_run_info(self.files, self.run_id, info)

    def track(self, value: float, name: str, step: int) -> None:
        self.track_many({name: value}, step)

    def track_many(
        self, values: Mapping[str, float], step: int, wall_time: float | None = None
    ) -> None:
        self._scalars.add(
            values, _check_step(step), time.time() if wall_time is None else wall_time
        )
        self._maybe_flush()

    def track_sample_norms(
        self, sample_ids: Sequence[int], norms: Sequence[float], step: int
    ) -> None:
        step = _check_step(step)
        ids = np.asarray(sample_ids)
        values = np.asarray(norms, dtype=np.float64)
        if ids.ndim != 1 or ids.shape != values.shape:
            raise ValueError(
                f"sample_ids and norms must be 1-D of equal length, got {ids.shape} and "
                f"{values.shape}"
            )
        if ids.size and not np.issubdtype(ids.dtype, np.integer):
            raise ValueError(f"sample_ids must be integers, got dtype {ids.dtype}")
        self._norm_steps.extend([step] * ids.size)
        self._norm_samples.extend(ids.astype(np.int64).tolist())
        self._norm_values.extend(values.tolist())
        self._maybe_flush()

    def track_eval(self, metrics: Mapping[str, float], step: int) -> None:
        self._evals.add(metrics, _check_step(step), time.time())
        self._maybe_flush()

    def track_curve(self, name: str, x: Any, y: Any, step: int) -> None:
        xs, ys = np.array(x, dtype=np.float64), np.array(y, dtype=np.float64)
        if not isinstance(name, str) or not name or xs.ndim != 1 or xs.shape != ys.shape:
            raise ValueError(f"curve {name!r}: x and y must be 1-D of one length")
        self._curves.append((_check_step(step), name, xs, ys))
        self._maybe_flush()

    def track_snapshot(self, embeddings: np.ndarray, labels: np.ndarray, step: int) -> None:
        step = _check_step(step)
        points = np.array(embeddings, dtype=np.float32)  # a copy: callers reuse buffers
        label_array = np.array(labels, dtype=np.int64)
        if points.ndim != 2 or label_array.shape != (points.shape[0],):
            raise ValueError(
                f"snapshot: embeddings must be N × d and labels N, got {points.shape} and "
                f"{label_array.shape}"
            )
        self._snapshots.append((step, points, label_array))
        self._maybe_flush()

    def track_query_results(self, results: object, step: int) -> None:
        """Per-query and per-class retrieval results of the evaluation at ``step``,
        written at once as their own files (``db.query_results``)."""
        from db import query_results  # pandas: loaded by the first evaluation only

        query_results.store_query_results(self.files, self.run_id, _check_step(step), results)

    def track_thumbnails(self, samples: Sequence[int], images: np.ndarray) -> None:
        """Small images of samples, written at once as PNGs (``db.thumbnails``)."""
        from db import thumbnails

        thumbnails.write_thumbnails(self.files, self.run_id, samples, images)

    def track_snapshot_samples(self, samples: Sequence[int], step: int) -> None:
        """The sample id of each point of the snapshot at ``step`` (``db.thumbnails``)."""
        from db import thumbnails

        thumbnails.write_snapshot_samples(self.files, self.run_id, _check_step(step), samples)

    def track_checkpoint(self, path: str, step: int) -> None:
        if not isinstance(path, str) or not path:
            raise ValueError(f"checkpoint path must be a non-empty string, got {path!r}")
        self._checkpoints.append((_check_step(step), path, time.time()))
        self._maybe_flush()

    def track_progress(self, step: int, total: int) -> None:
        self._progress = (_check_step(step), _check_step(total))
        self._maybe_flush()

    def flush(self) -> None:
        """Write everything buffered plus the heartbeat; ``StoreWriteError`` on failure."""
        self._last_flush = time.monotonic()
        if not self.files.exists(self.run_id):
            raise StoreWriteError(f"run {self.run_id} no longer exists (was it deleted?)")
        failures: list[tuple[bool, str, str]] = []  # (no space left, what, description)
        pending_tables = [entry for entry in self._pending_tables() if entry[1]]
        seq = self._seq  # one sequence number per flush, shared by the tables it writes
        if pending_tables:
            self._seq += 1
        for table, _, build, clear in pending_tables:
            path = self.files.table_dir(self.run_id, table) / layout.chunk_name(seq, self._token)
            try:
                write_table_file(path, table, build(), fsync=self.fsync)
            except Exception as error:
                # Keep the text, not the exception: its traceback holds the Arrow table,
                # which pins the buffers the next step must extend (BufferError).
                failures.append((is_no_space(error), table, describe_write_error(error, path)))
                continue
            clear()
        try:
            run_status.heartbeat(self.files, self.run_id, *self._progress)
        except Exception as error:
            beat = self.files.run_dir(self.run_id) / layout.HEARTBEAT
            failures.append((is_no_space(error), "heartbeat", describe_write_error(error, beat)))
        if failures:
            message = "; ".join(f"{what}: {text}" for _, what, text in failures)
            log.error("run %s: store write failed: %s", self.run_id, message)
            self._note_error(message)
            full = [text for no_space, _, text in failures if no_space]
            if full:  # one line: "no space left on device writing <path>"
                raise StoreWriteError(full[0])
            raise StoreWriteError(f"run {self.run_id}: could not write to the store: {message}")
        self.flushes += 1
        if pending_tables:  # a watched run's more frequent flushes count as fractions:
            # compaction rewrites files, so it keeps its unwatched cadence in time
            self._flushes_since_compaction += self._flush_weight()
        if self.compact_every and self._flushes_since_compaction >= self.compact_every:
            self._compact()

    def _compact(self) -> None:
        """Merge this run's chunks so readers open few files however long the run is,
        on a thread: the store's readers and this tracker's later chunks are safe
        meanwhile (``db.compaction``). A failure loses nothing."""
        self._flushes_since_compaction = 0
        if self._compaction is not None and self._compaction.is_alive():
            return  # the last one still runs; the next cadence tries again
        self._compaction = threading.Thread(
            target=self._compact_now, name=f"compact-{self.run_id}", daemon=True
        )
        self._compaction.start()

    def _compact_now(self) -> None:
        from db import compaction  # duckdb: loaded by the first compaction only

        try:
            compaction.compact_run(self.files, self.run_id, full=False, wait=False)
        except compaction.CompactionBusy:
            pass  # another process compacts it now; the next cadence tries again
        except Exception as error:
            log.warning("run %s: compaction failed (will retry): %s", self.run_id, error)
            self.files.report_problem(f"run {self.run_id}: compaction failed: {error}")

    def wait_for_compaction(self, timeout: float | None = None) -> bool:
        """Wait for a compaction in progress; False if it still runs after ``timeout``."""
        if self._compaction is not None:
            self._compaction.join(timeout)
            return not self._compaction.is_alive()
        return True

    # -- context manager: flush on exit, also on errors ------------------------------
    def __enter__(self) -> StoreTracker:
        return self

    def __exit__(self, *exc_info: object) -> None:
        try:
            self.flush()
        finally:
            self.wait_for_compaction()  # nothing half-done left behind by a process exit

    # -- internals -------------------------------------------------------------------
    def buffered_rows(self) -> int:
        return (
            len(self._scalars)
            + len(self._evals)
            + len(self._norm_values)
            + sum(points.shape[0] for _, points, _ in self._snapshots)
            + len(self._checkpoints)
            + sum(xs.size for _, _, xs, _ in self._curves)
        )

    def _maybe_flush(self) -> None:
        if (
            time.monotonic() - self._last_flush >= self._interval()
            or len(self._scalars) >= self.max_buffer_rows
        ):
            self.flush()

    def _flush_weight(self) -> float:
        if self._watched and self.flush_interval > 0:
            return self.watched_flush_interval / self.flush_interval
        return 1.0

    def _interval(self) -> float:
        """``watched_flush_interval`` while a live page watches the run (its marker,
        ``RunStore.mark_watched``), else ``flush_interval``: what a watcher waits for is
        mostly the next flush."""
        if self.watched_flush_interval >= self.flush_interval:
            return self.flush_interval
        self._watched = self._watched_now()
        return self.watched_flush_interval if self._watched else self.flush_interval

    def _pending_tables(self) -> list[tuple[str, int, Any, Any]]:
        return [
            (SCALARS, len(self._scalars), lambda: self._scalars.to_arrow(self.run_id),
             self._scalars.clear),
            (EVALS, len(self._evals), lambda: self._evals.to_arrow(self.run_id),
             self._evals.clear),
            (NORMS, len(self._norm_values), self._norms_table, self._clear_norms),
            (SNAPSHOTS, len(self._snapshots), self._snapshots_table, self._snapshots.clear),
            (CHECKPOINTS, len(self._checkpoints), self._checkpoints_table,
             self._checkpoints.clear),
            (CURVES, len(self._curves), self._curves_table, self._curves.clear),
        ]  # fmt: skip

    def _norms_table(self) -> pa.Table:
        return pa.table(
            {
                "run_id": constant_strings(self.run_id, len(self._norm_values)),
                "step": pa.array(np.frombuffer(self._norm_steps, dtype=np.int64)),
                "sample": pa.array(np.frombuffer(self._norm_samples, dtype=np.int64)),
                "norm": pa.array(np.frombuffer(self._norm_values, dtype=np.float64)),
            }
        )

    def _clear_norms(self) -> None:
        self._norm_steps = array("q")
        self._norm_samples = array("q")
        self._norm_values = array("d")

    def _snapshots_table(self) -> pa.Table:
        parts = []
        for step, points, labels in self._snapshots:
            count, dim = points.shape
            offsets = pa.array(np.arange(0, count * dim + 1, dim, dtype=np.int32))
            parts.append(
                pa.table(
                    {
                        "run_id": constant_strings(self.run_id, count),
                        "step": pa.array(np.full(count, step, dtype=np.int64)),
                        "point": pa.array(np.arange(count, dtype=np.int64)),
                        "label": pa.array(labels),
                        "norm": pa.array(np.linalg.norm(points, axis=1).astype(np.float32)),
                        "coords": pa.ListArray.from_arrays(offsets, pa.array(points.ravel())),
                    }
                )
            )
        return pa.concat_tables(parts)

    def _checkpoints_table(self) -> pa.Table:
        steps, paths, walls = zip(*self._checkpoints, strict=True)
        return pa.table(
            {
                "run_id": constant_strings(self.run_id, len(steps)),
                "step": pa.array(steps, pa.int64()),
                "path": pa.array(paths, pa.string()),
                "wall_time": pa.array(walls, pa.float64()),
            }
        )

    def _curves_table(self) -> pa.Table:
        steps, names, xs, ys = zip(*self._curves, strict=True)
        sizes = [x.size for x in xs]
        return pa.table(
            {
                "run_id": constant_strings(self.run_id, sum(sizes)),
                "step": pa.array(np.repeat(np.array(steps, dtype=np.int64), sizes)),
                "name": pa.array(
                    [n for n, size in zip(names, sizes, strict=True) for _ in range(size)],
                    pa.string(),
                ),
                "point": pa.array(
                    np.concatenate([np.arange(size, dtype=np.int64) for size in sizes])
                ),
                "x": pa.array(np.concatenate(xs)),
                "y": pa.array(np.concatenate(ys)),
            }
        )

    def _note_error(self, message: str) -> None:
        try:
            run_status.note_write_error(self.files, self.run_id, message)
        except Exception as error:  # e.g. the disk is full: one line, no traceback
            log.warning("run %s: could not record the write error: %s", self.run_id, error)
