"""``RemoteTracker``: the ``Tracker`` of a run written through the ingest service.

Each call becomes an operation (plain values; arrays kept as arrays); the operations
collected since the last flush are spooled as one batch every ``flush_interval``
seconds, on ``flush()``, and before any status change of the run (``RemoteStore``), so
the server applies everything in the order it was logged (``worker.ingest.apply``)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from db.remote.client import IngestRefused
from db.remote.wire import encode
from db.write_errors import StoreWriteError

if TYPE_CHECKING:
    from db.remote.link import RunLink


class RemoteRuns(Protocol):
    """What the tracker needs of the remote store (``RemoteStore``): a run's link and its
    heartbeat (a Protocol, so the store and its tracker do not import each other)."""

    def link(self, run_id: str) -> RunLink: ...

    def heartbeat(self, run_id: str, step: int | None = None, total: int | None = None) -> None: ...


class RemoteTracker:
    def __init__(self, store: RemoteRuns, run_id: str, flush_interval: float = 1.0) -> None:
        self.store, self.run_id = store, run_id
        self.flush_interval = float(flush_interval)
        self._ops: list[Any] = []
        self._last_flush = time.monotonic()
        self._progress: tuple[int | None, int | None] = (None, None)

    # -- Tracker protocol ------------------------------------------------------------------
    def track_run_info(self, info: Mapping[str, Any]) -> None:
        self._add("info", dict(info))

    def track(self, value: float, name: str, step: int) -> None:
        self.track_many({name: value}, step)

    def track_many(
        self, values: Mapping[str, float], step: int, wall_time: float | None = None
    ) -> None:
        wall = time.time() if wall_time is None else wall_time
        plain = {str(k): float(v) for k, v in values.items()}  # JSON-plain already
        self._ops.append(["scalars", plain, int(step), float(wall)])
        self._maybe_flush()

    def track_sample_norms(self, sample_ids: Sequence[int], norms: Sequence[float], step: int):
        self._add("norms", np.asarray(sample_ids), np.asarray(norms, np.float64), int(step))

    def track_eval(self, metrics: Mapping[str, float], step: int) -> None:
        self._add("eval", {k: float(v) for k, v in metrics.items()}, int(step))

    def track_curve(self, name: str, x: Sequence[float], y: Sequence[float], step: int) -> None:
        self._add("curve", name, np.asarray(x, np.float64), np.asarray(y, np.float64), int(step))

    def track_snapshot(self, embeddings: np.ndarray, labels: np.ndarray, step: int) -> None:
        self._add("snapshot", np.array(embeddings, np.float32), np.array(labels), int(step))

    def track_snapshot_samples(self, samples: Sequence[int], step: int) -> None:
        self._add("snapshot_samples", np.asarray(samples, np.int64), int(step))

    def track_query_results(self, results: Any, step: int) -> None:
        self._add("query_results", dict(results.queries), dict(results.classes), int(step))

    def track_thumbnails(self, samples: Sequence[int], images: np.ndarray) -> None:
        self._add("thumbnails", np.asarray(samples, np.int64), np.asarray(images))

    def track_checkpoint(self, path: str, step: int) -> None:
        self._add("checkpoint", str(path), int(step))

    def track_progress(self, step: int, total: int) -> None:
        self._progress = (int(step), int(total))
        self._add("progress", int(step), int(total))

    def flush(self) -> None:
        """Spool what was collected as one batch, with a heartbeat; ``StoreWriteError``
        when the spool cannot be written or the service refused this writer."""
        self._last_flush = time.monotonic()
        ops, self._ops = self._ops, []
        try:
            if ops:
                self.store.link(self.run_id).post(ops)
            self.store.heartbeat(self.run_id, *self._progress)
        except (OSError, IngestRefused) as error:
            self._ops = ops + self._ops  # kept: the next flush retries them
            raise StoreWriteError(f"run {self.run_id}: {error}") from None

    def take_ops(self) -> list[Any]:
        """Hand over what was collected (the store spools it before a status change)."""
        ops, self._ops = self._ops, []
        return ops

    def buffered_rows(self) -> int:
        return len(self._ops)

    def wait_for_compaction(self, timeout: float | None = None) -> bool:
        return True  # the server compacts

    def __enter__(self) -> RemoteTracker:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.flush()

    def _add(self, name: str, *args: Any) -> None:
        self._ops.append([name, *encode(list(args))])
        self._maybe_flush()

    def _maybe_flush(self) -> None:
        if time.monotonic() - self._last_flush >= self.flush_interval:
            self.flush()
