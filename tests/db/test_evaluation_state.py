"""An evaluation in flight is readable from the store: submitted, not yet collected."""

from __future__ import annotations

import threading
import time

import pytest

from db.evaluation_state import running_evaluation
from sphere_engine.evaluation.background import BackgroundEvaluations


class GatedEvaluator:
    """Computes its metrics only once the test opens the gate (a slow evaluation)."""

    def __init__(self) -> None:
        self.gate = threading.Event()

    def compute(self, captured, tracker, step):
        assert self.gate.wait(10)
        return {"recall@1": 0.5}


def test_running_evaluation_follows_submission_and_collection(store, config):
    run_id = store.create_run(config, status="running")
    evaluator = GatedEvaluator()
    evaluations = BackgroundEvaluations(evaluator)  # the real background runner
    with store.tracker(run_id, flush_interval=60) as tracker:
        assert running_evaluation(store, run_id) is None
        before = time.time()
        evaluations.submit(None, 100, tracker)
        evaluations.submit(None, 200, tracker)
        tracker.flush()
        running = running_evaluation(store, run_id)
        assert running is not None and running.step == 100  # the oldest, computing now
        assert before <= running.submitted_at <= time.time()
        evaluator.gate.set()
        evaluations.drain(tracker, 250)  # both collected: eval/seconds at steps 100, 200
        tracker.flush()
        assert running_evaluation(store, run_id) is None
    evaluations.close()


def test_unknown_run_is_an_error(store):
    with pytest.raises(ValueError, match="unknown run id"):
        running_evaluation(store, "nope")
