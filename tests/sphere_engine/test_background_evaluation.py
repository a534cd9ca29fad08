"""Periodic evaluation beside the training loop: training goes on, results keep their step."""

from __future__ import annotations

import threading
import time

import pytest

from sphere_engine.config import RunConfig
from sphere_engine.evaluation.evaluator import Evaluator
from sphere_engine.tracking import InMemoryTracker
from sphere_engine.train import run_training


def digits_config(**sections: dict) -> RunConfig:
    base: dict = {
        "data": {"name": "digits", "batch_size": 20, "samples_per_class": 4},
        "model": {"name": "mlp", "embedding_dim": 16},
        "objective": {"kind": "loss", "name": "triplet"},
        "optimizer": {"name": "adam", "lr": 1e-3},
        "training": {"seed": 0},
        "diagnostics": {"tracked_samples": 8, "eval_max_samples": 300},
    }
    for name, values in sections.items():
        base.setdefault(name, {}).update(values)
    return RunConfig.from_dict(base)


def _slow_compute(monkeypatch, seconds: float, threads: set[str]) -> None:
    compute = Evaluator.compute

    def slow(self, captured, tracker, step):
        threads.add(threading.current_thread().name)
        time.sleep(seconds)
        return compute(self, captured, tracker, step)

    monkeypatch.setattr(Evaluator, "compute", slow)


@pytest.mark.slow
def test_training_goes_on_while_a_slow_evaluation_computes(monkeypatch) -> None:
    threads: set[str] = set()
    _slow_compute(monkeypatch, 1.0, threads)
    tracker = InMemoryTracker()
    config = digits_config(training={"steps": 40}, diagnostics={"eval_every": 10})
    result = run_training(config, tracker)

    assert threads and all(name.startswith("evaluation") for name in threads)
    # every evaluation tracked under the step its embeddings were taken at
    assert sorted({step for step, name, _ in tracker.evals if name == "recall@1"}) == [
        10, 20, 30, 40,
    ]  # fmt: skip
    # a 1 s evaluation outlasts many ~10 ms steps: the loop did not wait for it
    lags = dict(tracker.eval_series("eval/lag_steps"))
    assert lags[10] > 0 or lags[20] > 0
    assert all(seconds >= 1.0 for _, seconds in tracker.eval_series("eval/seconds"))
    assert {step for step, name, _, _ in tracker.scalars if name == "eval/pending"} == {
        10, 20, 30, 40,
    }  # fmt: skip
    # the run waited for the last one: its metrics are the result's
    assert result.final_metrics["recall@1"] == dict(tracker.eval_series("recall@1"))[40]
    assert [step for step, _, _ in tracker.snapshots] == [10, 20, 30, 40]
    # per-query results kept with each evaluation's step (300 evaluated samples)
    assert [step for step, _ in tracker.query_results] == [10, 20, 30, 40]
    kept = tracker.query_results[-1][1]
    assert kept.queries["query"].size == 300 and kept.queries["neighbors"].shape == (300, 10)
    assert kept.classes["samples"].sum() == 300


@pytest.mark.slow
def test_background_off_evaluates_inline(monkeypatch) -> None:
    threads: set[str] = set()
    _slow_compute(monkeypatch, 0.0, threads)
    tracker = InMemoryTracker()
    config = digits_config(
        training={"steps": 20}, diagnostics={"eval_every": 10}, evaluation={"background": False}
    )
    run_training(config, tracker)
    assert threads == {threading.main_thread().name}
    assert dict(tracker.eval_series("eval/lag_steps")) == {10: 0.0, 20: 0.0}
