"""``Run``: one training run of the user's own code, recorded in the SphereScope store."""

from __future__ import annotations

import contextlib
import functools
import numbers
import time
import warnings
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

from db.heartbeat import heartbeat_interval
from db.lifecycle import RunLifecycle
from db.records import TERMINAL
from db.store import RunStore
from spherescope._delivery import Delivery
from spherescope._writer import SafeWriter

if TYPE_CHECKING:
    from sphere_engine.diagnostics.pending_statistics import WaitingStep

# What the user's thread collects before handing it to the writer thread in one batch
# (the finished diagnostics come every ~32 logged steps anyway): this many scalar calls,
# or anything this old, so that a run logging only scalars still shows up live
_HAND_OVER_CALLS = 64
_HAND_OVER_AGE_S = 0.5


class Run:
    """Logs scalars, per-step embedding diagnostics and evaluations of one run.

    Create it with ``spherescope.init``. Use it as a context manager: leaving the block
    normally ends the run ``finished``; an exception ends it ``failed`` (with the
    exception's message) and propagates.
    """

    def __init__(
        self,
        store: RunStore,
        *,
        name: str | None,
        config: Mapping[str, Any],
        tags: Any,
        log_every: int,
        tracked: Any,
        strict: bool,
    ) -> None:
        from sphere_engine.diagnostics.external_step import ExternalStep

        self._steps = ExternalStep(log_every=log_every, tracked=tracked)  # checks first
        self.store = store
        self.strict = strict
        self.ended = False
        self.step: int | None = None  # the latest step seen, sent with the heartbeat
        self._device_noted = False
        self._lifecycle = self._start(config, name, tags)
        self._writer = SafeWriter(self._lifecycle, strict=strict)
        # store writes run on a writer thread (strict: inline, so a failure raises at
        # its call); the user's thread collects them in ``_outbox`` between hand-overs
        self._delivery = Delivery(self._writer, background=not strict)
        self._outbox: list[Callable[[], None]] = []
        self._outbox_since = 0.0

    @property
    def id(self) -> str:
        return self._lifecycle.run_id

    def __repr__(self) -> str:
        return f"Run({self.id!r}, home={str(self.store.home)!r})"

    # -- logging ---------------------------------------------------------------------
    def log(self, values: Mapping[str, Any], step: int) -> None:
        """Scalars at ``step`` (numbers or 0-dim tensors), e.g. ``{"loss/total": 0.3}``."""
        if not isinstance(values, Mapping):
            raise ValueError(
                f"values must be a dict of name -> number, got {type(values).__name__}"
            )
        plain = {}
        for name, value in values.items():
            if not isinstance(name, str) or not name:
                raise ValueError(f"metric names must be non-empty strings, got {name!r}")
            plain[name] = _number(name, value)
        self._note_step(step)
        self._post(functools.partial(self._write_scalars, plain, int(step), time.time()))
        self._deliver()

    def log_embeddings(
        self, embeddings: Any, labels: Any, step: int, sample_ids: Any = None
    ) -> None:
        """The per-step geometry diagnostics of a batch of raw (un-normalised) N × d
        embeddings, as SphereScope's own training loop logs them. When ``embeddings``
        requires a gradient, the gradient statistics are added when ``backward`` runs."""
        self._deliver()
        self._note_step(step)
        self._steps.observe(embeddings, labels, step, sample_ids)
        if not self._device_noted and hasattr(embeddings, "device"):
            # what the dashboard shows as the run's device (the SDK never picks one)
            self._device_noted = True
            info = {"device": str(embeddings.device)}
            self._post(lambda: self._writer.call(self._writer.tracker.track_run_info, info))

    def evaluate(
        self,
        embeddings: Any,
        labels: Any,
        step: int,
        reference: Any = None,
        reference_labels: Any = None,
        vertices: Any = None,
        snapshot_size: int = 2000,
    ) -> dict[str, float]:
        """Evaluate held-out embeddings as a training run's evaluation does (retrieval,
        clustering, angular separation, vertex alignment given ``vertices``) and keep a
        snapshot for the Geometry page. Returns the metrics."""
        from sphere_engine.evaluation.external import evaluate_external

        self._deliver(finish=True)  # the diagnostics before the evaluation
        self._note_step(step)
        metrics, points, point_labels = evaluate_external(
            embeddings,
            labels,
            reference=reference,
            reference_labels=reference_labels,
            vertices=vertices,
            snapshot_size=snapshot_size,
        )
        write = functools.partial(self._write_evaluation, dict(metrics), points, point_labels, step)
        self._post(write)
        self._deliver(finish=True)
        return metrics

    # -- ending ------------------------------------------------------------------------
    def finish(self, status: str = "finished", message: str = "") -> None:
        """Flush everything and end the run (``finished``, ``failed`` or ``cancelled``)."""
        if self.ended:
            return
        if status not in TERMINAL or status == "lost":
            raise ValueError(f"status must be finished, failed or cancelled, got {status!r}")
        self._deliver(force=True)
        self._delivery.close()  # everything handed over is written (or contained)
        try:
            self._writer.final_flush()  # raises only when strict
        except BaseException as error:
            self._end(error=error)
            raise
        self._lifecycle.end(status, message, **self._writer.problem())
        self._end()

    def __enter__(self) -> Run:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc is None:
            self.finish()
        elif not self.ended:  # failed or cancelled, recorded as every run records it
            with contextlib.suppress(Exception):  # the run's own error is what matters
                self._deliver(force=True)
                self._delivery.close()
                self._writer.final_flush()
            self._end(error=exc)

    # -- internals -----------------------------------------------------------------------
    def _post(self, write: Callable[[], None]) -> None:
        """Queue a store write for the next hand-over to the writer thread."""
        if not self._outbox:
            self._outbox_since = time.monotonic()
        self._outbox.append(write)

    def _deliver(self, force: bool = False, finish: bool = False) -> None:
        """Move completed diagnostic steps to the host; hand what is collected to the
        writer thread when the steps are due (K waiting, or ~0.5 s old), on ``finish``
        / ``force``, or when enough scalar calls or old ones wait."""
        waiting = self._steps.drain_unfinished(force=force, finish=finish)
        if waiting:
            self._post(functools.partial(self._write_steps, waiting))
        if self._outbox and (
            waiting
            or not self._delivery.background  # strict: each write raises at its call
            or force
            or finish
            or len(self._outbox) >= _HAND_OVER_CALLS
            or time.monotonic() - self._outbox_since >= _HAND_OVER_AGE_S
        ):
            writes, self._outbox = self._outbox, []
            self._delivery.submit(functools.partial(_run_all, writes))

    # -- the writes (on the writer thread, or inline when strict) -------------------------
    def _write_scalars(self, values: dict[str, float], step: int, wall_time: float) -> None:
        self._writer.call(self._writer.tracker.track_many, values, step, wall_time)

    def _write_steps(self, waiting: list[WaitingStep]) -> None:
        """Finish logged steps (K at once, NumPy) and write their values."""
        from sphere_engine.diagnostics.pending_statistics import finish_waiting

        tracker = self._writer.tracker
        for record in finish_waiting(waiting):
            self._writer.call(tracker.track_many, record.values, record.step, record.wall_time)
            if record.sample_ids:
                self._writer.call(
                    tracker.track_sample_norms, record.sample_ids, record.sample_norms, record.step
                )

    def _write_evaluation(
        self, metrics: dict[str, float], points: Any, point_labels: Any, step: int
    ) -> None:
        self._writer.call(self._writer.tracker.track_eval, metrics, step)
        if len(point_labels):
            self._writer.call(self._writer.tracker.track_snapshot, points, point_labels, step)

    def _note_step(self, step: Any) -> None:
        if self.ended:
            raise ValueError(f"run {self.id} has ended; start a new one with spherescope.init")
        if not isinstance(step, numbers.Integral) or isinstance(step, bool) or step < 0:
            raise ValueError(f"step must be an integer >= 0, got {step!r}")
        self.step = int(step)

    # The run's lifecycle (db.lifecycle, shared with the worker and the CLI): these two
    # methods are the only places that change its status or heartbeat.
    def _start(self, config: Mapping[str, Any], name: str | None, tags: Any) -> RunLifecycle:
        run_id = self.store.create_run(config, name, kind="external", tags=tags, status="running")
        lifecycle = RunLifecycle(
            self.store,
            run_id,
            heartbeat_s=heartbeat_interval(),
            accept_running=True,
            heartbeat_store=_ProgressBeat(self),
        )
        return lifecycle.start()

    def _end(self, error: BaseException | None = None) -> None:
        """Stop the heartbeat and write the outcome (``error``: failed or cancelled)."""
        self.ended = True
        with contextlib.suppress(Exception):  # normally closed already; never twice
            self._delivery.close()
        try:
            self._lifecycle.finish(error)
        except Exception as late:
            if self.strict:
                raise
            warnings.warn(
                f"spherescope: run {self.id}: could not record its end ({late})",
                RuntimeWarning,
                stacklevel=3,
            )


class _ProgressBeat:
    """What the lifecycle's heartbeat thread beats through: adds the run's latest step."""

    def __init__(self, run: Run) -> None:
        self.run = run

    def heartbeat(self, run_id: str, step: int | None = None, total: int | None = None) -> None:
        self.run.store.heartbeat(run_id, self.run.step if step is None else step, total)


def _number(name: str, value: Any) -> float:
    if hasattr(value, "item") and getattr(value, "ndim", 0) == 0:
        value = value.item()  # a 0-dim tensor or numpy scalar
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"metric {name!r} must be a number, got {value!r}")
    return float(value)  # NaN is kept: a gap in the series, as in the engine


def _run_all(writes: list[Callable[[], None]]) -> None:
    for write in writes:
        write()
