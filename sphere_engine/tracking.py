"""The tracker interface: how ``run_training`` reports, without knowing who listens.

``Tracker`` is the whole surface, declared once: the training loop, the evaluation and
the SDK call these methods and nothing else (no optional method is probed for). Its
method bodies are the defaults a class gets by subclassing it: no-ops (``track`` hands
its scalar to ``track_many``). All methods receive plain Python / numpy values (never
tensors), already on the host.

Beside the protocol: ``BaseTracker`` (the no-op tracker of the ranks that write
nothing, and the base of listeners that take part of the surface: the CLI's progress
bar), ``InMemoryTracker`` (tests and notebooks read back what was tracked), and the
two trackers that pass calls on, written once in ``ForwardingTracker``:
``CompositeTracker`` (to several trackers now) and ``RecordingTracker`` (later, on
another thread: the background evaluation). The run store's ``db.tracker.StoreTracker``
is the one that writes.

Metric keys are lower-case with slash namespaces: ``loss/total``, ``norm/var``,
``eval/recall@1``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Tracker(Protocol):
    def track_run_info(self, info: Mapping[str, Any]) -> None:
        """Once, when training starts: device, parameter count, dataset sizes, ..."""

    def track(self, value: float, name: str, step: int) -> None:
        """One scalar at one step."""
        self.track_many({name: value}, step)

    def track_many(
        self, values: Mapping[str, float], step: int, wall_time: float | None = None
    ) -> None:
        """All per-step scalars of one step (the batched form). ``wall_time``: when the
        step happened (Unix seconds), for values reported after it; default: now."""

    def track_sample_norms(
        self, sample_ids: Sequence[int], norms: Sequence[float], step: int
    ) -> None:
        """Norms of the fixed set of tracked training samples at one step."""

    def track_eval(self, metrics: Mapping[str, float], step: int) -> None:
        """Evaluation metrics on the test split at one step."""

    def track_curve(self, name: str, x: Sequence[float], y: Sequence[float], step: int) -> None:
        """A curve evaluated at one step (``verification/roc``: x = FAR, y = TAR)."""

    def track_snapshot(self, embeddings: np.ndarray, labels: np.ndarray, step: int) -> None:
        """Raw (un-normalised) test embeddings (N × d float32) with labels (N int)."""

    def track_snapshot_samples(self, samples: Sequence[int], step: int) -> None:
        """The sample id of each point of the snapshot at ``step`` (its thumbnail's key)."""

    def track_query_results(self, results: Any, step: int) -> None:
        """Per-query and per-class retrieval results of the evaluation at ``step``
        (``metrics.per_query.QueryResults``)."""

    def track_thumbnails(self, samples: Sequence[int], images: np.ndarray) -> None:
        """Small uint8 images (n × h × w × C) of the evaluated samples ``samples`` (the
        ids the per-query results use), for the dashboard's strips."""

    def track_checkpoint(self, path: str, step: int) -> None:
        """A checkpoint was written."""

    def track_progress(self, step: int, total: int) -> None:
        """Training has completed ``step`` of ``total`` iterations."""

    def flush(self) -> None:
        """Persist anything buffered (called at the end, on errors and on cancel)."""


class BaseTracker(Tracker):
    """The protocol's no-op defaults as a class: a tracker that records nothing, and the
    base of one that listens to a few calls."""


@dataclass
class InMemoryTracker(BaseTracker):
    """Keeps everything in Python lists; for tests and notebooks."""

    run_info: dict[str, Any] = field(default_factory=dict)
    # (step, name, value, wall time)
    scalars: list[tuple[int, str, float, float]] = field(default_factory=list)
    sample_norms: list[tuple[int, int, float]] = field(default_factory=list)  # step, sample, norm
    evals: list[tuple[int, str, float]] = field(default_factory=list)
    snapshots: list[tuple[int, np.ndarray, np.ndarray]] = field(default_factory=list)
    curves: list[tuple[int, str, list[float], list[float]]] = field(default_factory=list)
    checkpoints: list[tuple[int, str]] = field(default_factory=list)
    progress: tuple[int, int] = (0, 0)
    flushes: int = 0
    query_results: list[tuple[int, Any]] = field(default_factory=list)  # (step, QueryResults)
    thumbnails: dict[int, np.ndarray] = field(default_factory=dict)  # sample → image
    snapshot_samples: dict[int, list[int]] = field(default_factory=dict)  # step → samples

    def track_run_info(self, info: Mapping[str, Any]) -> None:
        self.run_info.update(info)

    def track_many(
        self, values: Mapping[str, float], step: int, wall_time: float | None = None
    ) -> None:
        now = time.time() if wall_time is None else wall_time
        self.scalars.extend((step, name, float(value), now) for name, value in values.items())

    def track_sample_norms(
        self, sample_ids: Sequence[int], norms: Sequence[float], step: int
    ) -> None:
        self.sample_norms.extend(
            (step, int(sample), float(norm)) for sample, norm in zip(sample_ids, norms, strict=True)
        )

    def track_eval(self, metrics: Mapping[str, float], step: int) -> None:
        self.evals.extend((step, name, float(value)) for name, value in metrics.items())

    def track_curve(self, name: str, x: Sequence[float], y: Sequence[float], step: int) -> None:
        self.curves.append((step, name, [float(v) for v in x], [float(v) for v in y]))

    def track_snapshot(self, embeddings: np.ndarray, labels: np.ndarray, step: int) -> None:
        self.snapshots.append((step, np.asarray(embeddings), np.asarray(labels)))

    def track_query_results(self, results: Any, step: int) -> None:
        self.query_results.append((step, results))

    def track_thumbnails(self, samples: Sequence[int], images: np.ndarray) -> None:
        self.thumbnails.update(zip((int(s) for s in samples), np.asarray(images), strict=True))

    def track_snapshot_samples(self, samples: Sequence[int], step: int) -> None:
        self.snapshot_samples[step] = [int(s) for s in samples]

    def track_checkpoint(self, path: str, step: int) -> None:
        self.checkpoints.append((step, path))

    def track_progress(self, step: int, total: int) -> None:
        self.progress = (step, total)

    def flush(self) -> None:
        self.flushes += 1

    # -- reading back ---------------------------------------------------------------
    def series(self, name: str) -> list[tuple[int, float]]:
        """(step, value) pairs of one per-step scalar, in logging order."""
        return [(step, value) for step, key, value, _ in self.scalars if key == name]

    def last(self, name: str) -> float:
        values = self.series(name)
        if not values:
            raise KeyError(f"no values tracked for {name!r}")
        return values[-1][1]

    def eval_series(self, name: str) -> list[tuple[int, float]]:
        return [(step, value) for step, key, value in self.evals if key == name]

    def names(self) -> set[str]:
        return {key for _, key, _, _ in self.scalars}


TrackerCall = Callable[[Tracker], None]


class ForwardingTracker(BaseTracker):
    """Every call handed to ``send`` as a function of the receiving tracker; the
    subclasses say when and to whom. Mappings are copied: the caller may reuse them."""

    def send(self, call: TrackerCall) -> None:
        raise NotImplementedError

    def track_run_info(self, info: Mapping[str, Any]) -> None:
        info = dict(info)
        self.send(lambda tracker: tracker.track_run_info(info))

    def track(self, value: float, name: str, step: int) -> None:
        self.send(lambda tracker: tracker.track(value, name, step))

    def track_many(
        self, values: Mapping[str, float], step: int, wall_time: float | None = None
    ) -> None:
        values = dict(values)
        self.send(lambda tracker: tracker.track_many(values, step, wall_time))

    def track_sample_norms(
        self, sample_ids: Sequence[int], norms: Sequence[float], step: int
    ) -> None:
        self.send(lambda tracker: tracker.track_sample_norms(sample_ids, norms, step))

    def track_eval(self, metrics: Mapping[str, float], step: int) -> None:
        metrics = dict(metrics)
        self.send(lambda tracker: tracker.track_eval(metrics, step))

    def track_curve(self, name: str, x: Sequence[float], y: Sequence[float], step: int) -> None:
        self.send(lambda tracker: tracker.track_curve(name, x, y, step))

    def track_snapshot(self, embeddings: np.ndarray, labels: np.ndarray, step: int) -> None:
        self.send(lambda tracker: tracker.track_snapshot(embeddings, labels, step))

    def track_snapshot_samples(self, samples: Sequence[int], step: int) -> None:
        self.send(lambda tracker: tracker.track_snapshot_samples(samples, step))

    def track_query_results(self, results: Any, step: int) -> None:
        self.send(lambda tracker: tracker.track_query_results(results, step))

    def track_thumbnails(self, samples: Sequence[int], images: np.ndarray) -> None:
        self.send(lambda tracker: tracker.track_thumbnails(samples, images))

    def track_checkpoint(self, path: str, step: int) -> None:
        self.send(lambda tracker: tracker.track_checkpoint(path, step))

    def track_progress(self, step: int, total: int) -> None:
        self.send(lambda tracker: tracker.track_progress(step, total))

    def flush(self) -> None:
        self.send(lambda tracker: tracker.flush())


class CompositeTracker(ForwardingTracker):
    """Forwards every call to several trackers (e.g. the store and a progress bar)."""

    def __init__(self, *trackers: Tracker) -> None:
        self.trackers = trackers

    def send(self, call: TrackerCall) -> None:
        for tracker in self.trackers:
            call(tracker)


class RecordingTracker(ForwardingTracker):
    """Keeps the calls to replay them into another tracker later (the background
    evaluation's thread records; the loop's thread replays, so the run's tracker is
    only ever called from one thread)."""

    def __init__(self) -> None:
        self.calls: list[TrackerCall] = []

    def send(self, call: TrackerCall) -> None:
        self.calls.append(call)

    def replay(self, tracker: Tracker) -> None:
        for call in self.calls:
            call(tracker)
