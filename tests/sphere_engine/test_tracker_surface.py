"""One tracker interface: every tracker answers the whole ``Tracker`` protocol with the
protocol's signatures, so no caller probes for a method, and the trackers that pass
calls on (composite, recorder) deliver every one of them."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from db.tracker import StoreTracker
from sphere_engine.tracking import (
    BaseTracker,
    CompositeTracker,
    InMemoryTracker,
    RecordingTracker,
    Tracker,
)
from worker.progress import ProgressBar

SURFACE = sorted(
    name
    for name, member in vars(Tracker).items()
    if inspect.isfunction(member) and not name.startswith("_")
)
TRACKERS = [
    BaseTracker,
    InMemoryTracker,
    CompositeTracker,
    RecordingTracker,
    StoreTracker,
    ProgressBar,
]


def _parameters(function: object) -> list[str]:
    return list(inspect.signature(function).parameters)


def test_the_surface_holds_every_method_the_evaluation_and_the_sdk_call() -> None:
    assert {"track_query_results", "track_thumbnails", "track_snapshot_samples"} <= set(SURFACE)
    assert len(SURFACE) == 13


@pytest.mark.parametrize("tracker", TRACKERS, ids=lambda cls: cls.__name__)
def test_every_tracker_has_every_method_with_the_protocols_parameters(tracker: type) -> None:
    for name in SURFACE:
        method = getattr(tracker, name, None)
        assert callable(method), f"{tracker.__name__}.{name} is missing"
        assert _parameters(method) == _parameters(getattr(Tracker, name)), (
            f"{tracker.__name__}.{name}{inspect.signature(method)} differs from the protocol"
        )


def _call_everything(tracker: Tracker) -> None:
    tracker.track_run_info({"device": "cpu"})
    tracker.track(0.5, "loss/total", 1)
    tracker.track_many({"norm/var": 0.25}, 2, 1000.0)
    tracker.track_sample_norms([7, 8], [1.0, 2.0], 2)
    tracker.track_eval({"recall@1": 0.75}, 3)
    tracker.track_curve("verification/roc", [0.1, 1.0], [0.5, 1.0], 3)
    tracker.track_snapshot(np.ones((2, 3), np.float32), np.array([0, 1]), 3)
    tracker.track_snapshot_samples([4, 5], 3)
    tracker.track_query_results("results", 3)
    tracker.track_thumbnails([4], np.zeros((1, 2, 2, 1), np.uint8))
    tracker.track_checkpoint("/ckpt.pt", 3)
    tracker.track_progress(3, 10)
    tracker.flush()


def _tracked(tracker: InMemoryTracker) -> tuple:
    return (
        tracker.run_info,
        [row[:3] for row in tracker.scalars],
        tracker.sample_norms,
        tracker.evals,
        tracker.curves,
        [(step, e.tolist(), l.tolist()) for step, e, l in tracker.snapshots],
        tracker.snapshot_samples,
        tracker.query_results,
        {sample: image.tolist() for sample, image in tracker.thumbnails.items()},
        tracker.checkpoints,
        tracker.progress,
        tracker.flushes,
    )


def test_composite_and_recorder_deliver_every_call() -> None:
    direct = InMemoryTracker()
    _call_everything(direct)
    first, second = InMemoryTracker(), InMemoryTracker()
    _call_everything(CompositeTracker(first, BaseTracker(), second))
    recorder, replayed = RecordingTracker(), InMemoryTracker()
    _call_everything(recorder)
    assert replayed.flushes == 0  # nothing reaches a tracker before the replay
    recorder.replay(replayed)

    expected = _tracked(direct)
    assert expected[1] == [(1, "loss/total", 0.5), (2, "norm/var", 0.25)]
    assert _tracked(first) == _tracked(second) == _tracked(replayed) == expected


def test_the_recorder_keeps_the_values_of_a_mapping_the_caller_reuses() -> None:
    recorder, replayed = RecordingTracker(), InMemoryTracker()
    metrics = {"recall@1": 0.5}
    recorder.track_eval(metrics, 1)
    metrics["recall@1"] = 0.9
    recorder.replay(replayed)
    assert replayed.evals == [(1, "recall@1", 0.5)]
