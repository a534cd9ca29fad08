"""The run's periodic evaluations beside the training loop, not in its way.

The loop captures what an evaluation needs from the model (``Evaluator.capture``: the
test embeddings, logits, ...) and hands it to ``BackgroundEvaluations.submit``; one
worker thread computes the metrics (numpy and faiss, which release the GIL) while
training goes on. Everything the computation tracks is recorded, not written, and
replayed into the run's tracker by ``collect`` on the loop's own thread, each value
tagged with the step the embeddings were taken at, so the tracker is only ever called
from one thread.

A slow evaluation is visible: ``eval/pending`` (a scalar at the submitting step: how
many evaluations are in flight, this one included), and with each result
``eval/seconds`` (its computation time) and ``eval/lag_steps`` (how many steps
training advanced before it was collected). At most ``max_pending`` are in flight:
the next submission waits for the oldest (bounded memory). ``drain`` waits for all;
the run calls it at its end. With ``background=False`` evaluations run inline.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from sphere_engine.evaluation.evaluator import Captured, Evaluator
from sphere_engine.tracking import RecordingTracker, Tracker

MAX_PENDING = 2


@dataclass
class _Pending:
    step: int
    future: Future[tuple[dict[str, float], RecordingTracker, float]]


class BackgroundEvaluations:
    """Submits captured evaluations to one thread and collects them in step order."""

    def __init__(
        self,
        evaluator: Evaluator,
        *,
        background: bool = True,
        max_pending: int = MAX_PENDING,
        on_result: Callable[[int, dict[str, float]], None] | None = None,
    ) -> None:
        self.evaluator = evaluator
        self.on_result = on_result  # (step, metrics) of each result, in step order
        self.background = background
        self.max_pending = max(1, max_pending)
        self.pending: deque[_Pending] = deque()
        self.executor = ThreadPoolExecutor(1, "evaluation") if background else None
        self.last_metrics: dict[str, float] = {}
        self.evaluated: dict[int, dict[str, float]] = {}  # step → metrics, for retention

    def _compute(self, captured: Captured, step: int):
        recorder = RecordingTracker()
        started = time.perf_counter()
        metrics = self.evaluator.compute(captured, recorder, step)
        return metrics, recorder, time.perf_counter() - started

    def submit(self, captured: Captured, step: int, tracker: Tracker) -> None:
        """Start the evaluation of ``captured`` (taken at ``step``)."""
        if self.executor is None:
            future: Future = Future()
            future.set_result(self._compute(captured, step))
            self.pending.append(_Pending(step, future))
            self.collect(tracker, step)
            return
        while len(self.pending) >= self.max_pending:
            self._finish_oldest(tracker, step)
        self.pending.append(_Pending(step, self.executor.submit(self._compute, captured, step)))
        tracker.track(float(len(self.pending)), "eval/pending", step)

    def _finish_oldest(self, tracker: Tracker, now: int) -> None:
        done = self.pending.popleft()
        metrics, recorder, seconds = done.future.result()  # re-raises its failure here
        recorder.replay(tracker)
        timing = {"eval/seconds": seconds, "eval/lag_steps": float(now - done.step)}
        tracker.track_eval(timing, done.step)
        self.last_metrics = metrics
        self.evaluated[done.step] = dict(metrics)
        if self.on_result is not None:
            self.on_result(done.step, metrics)

    def collect(self, tracker: Tracker, now: int) -> None:
        """Track every finished evaluation (oldest first) without waiting."""
        while self.pending and self.pending[0].future.done():
            self._finish_oldest(tracker, now)

    def drain(self, tracker: Tracker, now: int) -> dict[str, float]:
        """Wait for every evaluation in flight; the metrics of the last one."""
        while self.pending:
            self._finish_oldest(tracker, now)
        return self.last_metrics

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=True, cancel_futures=True)
