"""Rank 0's store writes of a ``Run``: collected on the user's thread, handed over in
batches.

Each ``Run`` call that records something posts a write here; ``deliver`` moves the
completed diagnostic steps to the host and hands everything collected to ``Delivery``
(the writer thread, or inline for a strict run) when the steps are due (K waiting, or
~0.5 s old), when the run flushes or finishes, or when enough scalar calls or old ones
wait. The writes themselves (``_write_*``) run on the writer thread.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from spherescope._delivery import Delivery
from spherescope._writer import SafeWriter

if TYPE_CHECKING:
    from sphere_engine.diagnostics.batched_finish import WaitingStep
    from sphere_engine.diagnostics.external_step import ExternalStep

# What the user's thread collects before handing it to the writer thread in one batch
# (the finished diagnostics come every ~32 logged steps anyway): this many scalar calls,
# or anything this old, so that a run logging only scalars still shows up live
HAND_OVER_CALLS = 64
HAND_OVER_AGE_S = 0.5


class Outbox:
    """Writes waiting for the next hand-over to ``Delivery``; ``close`` writes them all."""

    def __init__(self, writer: SafeWriter, steps: ExternalStep, *, background: bool) -> None:
        self.writer, self.steps = writer, steps
        self.delivery = Delivery(writer, background=background)
        self._writes: list[Callable[[], None]] = []
        self._since = 0.0
        self._calls = 0  # calls collected since the last hand-over
        # the scalar rows collected since then: one write in the outbox for all of them
        self._scalar_rows: list[tuple[dict[str, float], int, float]] | None = None

    def post(self, write: Callable[[], None]) -> None:
        """Queue a store write for the next hand-over."""
        if not self._writes:
            self._since = time.monotonic()
        self._writes.append(write)
        self._calls += 1

    def post_scalars(self, values: dict[str, float], step: int) -> None:
        """A ``log`` call's scalars, at the time of the call."""
        if self._scalar_rows is None:
            self._scalar_rows = []
            self.post(functools.partial(self._write_scalars, self._scalar_rows))
        else:
            self._calls += 1
        self._scalar_rows.append((values, step, time.time()))

    def post_samples(self, ids: Any, pixels: Any) -> None:
        """``log_samples``' checked images."""
        self.post(functools.partial(self._write_samples, ids, pixels))

    def post_run_info(self, info: dict[str, Any]) -> None:
        self.post(functools.partial(self._write_run_info, info))

    def post_evaluation(
        self,
        metrics: dict[str, float],
        points: Any,
        point_labels: Any,
        step: int,
        results: Any = None,
        samples: Any = None,
    ) -> None:
        """An evaluation's metrics, snapshot (``points``, their labels and samples) and
        per-query ``results``."""
        write = self._write_evaluation
        self.post(functools.partial(write, metrics, points, point_labels, step, results, samples))

    def deliver(self, force: bool = False, finish: bool = False) -> None:
        """Move completed diagnostic steps to the host; hand what is collected over when
        the steps are due, on ``finish`` / ``force``, or when enough calls or old ones
        wait."""
        waiting = self.steps.drain_unfinished(force=force, finish=finish)
        if waiting:
            self.post(functools.partial(self._write_steps, waiting))
        if self._writes and (
            waiting
            or not self.delivery.background  # strict: each write raises at its call
            or force
            or finish
            or self._calls >= HAND_OVER_CALLS
            or time.monotonic() - self._since >= HAND_OVER_AGE_S
        ):
            writes, self._writes = self._writes, []
            self._calls, self._scalar_rows = 0, None
            self.delivery.submit(functools.partial(_run_all, writes))

    def close(self) -> None:
        """Wait until everything handed over is written (or contained); idempotent."""
        self.delivery.close()

    # -- the writes (on the writer thread, or inline when strict) ------------------------
    def _write_scalars(self, rows: list[tuple[dict[str, float], int, float]]) -> None:
        """The scalars of ``log`` calls: (values, step, wall time) each."""
        track_many = self.writer.tracker.track_many
        for values, step, wall_time in rows:
            self.writer.call(track_many, values, step, wall_time)

    def _write_steps(self, waiting: list[WaitingStep]) -> None:
        """Finish logged steps (K at once, NumPy) and write their values."""
        from sphere_engine.diagnostics.batched_finish import finish_waiting

        tracker = self.writer.tracker
        for record in finish_waiting(waiting):
            self.writer.call(tracker.track_many, record.values, record.step, record.wall_time)
            if record.sample_ids:
                self.writer.call(
                    tracker.track_sample_norms, record.sample_ids, record.sample_norms, record.step
                )

    def _write_evaluation(
        self,
        metrics: dict[str, float],
        points: Any,
        point_labels: Any,
        step: int,
        results: Any = None,
        samples: Any = None,
    ) -> None:
        tracker = self.writer.tracker
        self.writer.call(tracker.track_eval, metrics, step)
        if results is not None:
            self.writer.call(tracker.track_query_results, results, step)
        if samples is not None and len(samples):
            self.writer.call(tracker.track_snapshot_samples, samples, step)
        if len(point_labels):
            self.writer.call(tracker.track_snapshot, points, point_labels, step)

    def _write_samples(self, ids: Any, pixels: Any) -> None:
        self.writer.call(self.writer.tracker.track_thumbnails, ids, pixels)

    def _write_run_info(self, info: dict[str, Any]) -> None:
        self.writer.call(self.writer.tracker.track_run_info, info)


def _run_all(writes: list[Callable[[], None]]) -> None:
    for write in writes:
        write()
