"""The training loop end to end on scikit-learn's digits (small and fast)."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch

from sphere_engine.config import RunConfig
from sphere_engine.heads import HEADS
from sphere_engine.losses import LOSSES
from sphere_engine.regularizers import REGULARIZERS
from sphere_engine.tracking import InMemoryTracker
from sphere_engine.train import TrainingDivergedError, load_checkpoint, run_training

PER_STEP = {
    "loss/total",
    "loss/metric",
    "norm/mean",
    "norm/var",
    "norm/std",
    "norm/cv",
    "norm/min",
    "norm/max",
    "norm/p05",
    "norm/p50",
    "norm/p95",
    "cos/pos",
    "cos/neg",
    "cos/gap",
    "grad/norm_mean",
    "grad/norm_inv_corr",
    "grad/radial_cos",
    "grad/rotation_ratio",
    "direction/angle_mean",
    "direction/update_ratio",
    "lr",
    "time/step",
    "time/samples_per_s",
}


def digits_config(**sections: dict) -> RunConfig:
    base: dict = {
        "data": {"name": "digits", "batch_size": 20, "samples_per_class": 4},
        "model": {"name": "mlp", "embedding_dim": 16},
        "objective": {"kind": "loss", "name": "triplet"},
        "optimizer": {"name": "adam", "lr": 1e-3},
        "training": {"steps": 6, "seed": 0},
        "diagnostics": {"eval_every": 1000, "tracked_samples": 8, "eval_max_samples": 300},
    }
    for name, values in sections.items():
        base.setdefault(name, {}).update(values)
    return RunConfig.from_dict(base)


def test_every_diagnostic_is_logged_every_step() -> None:
    tracker = InMemoryTracker()
    result = run_training(digits_config(regularizer={"name": "sec", "weight": 0.5}), tracker)
    assert result.steps_completed == 6 and not result.cancelled
    assert PER_STEP | {"loss/sec", "sec/mu_batch", "sec/mu_ema"} <= tracker.names()
    assert [step for step, _ in tracker.series("norm/var")] == [1, 2, 3, 4, 5, 6]
    # loss/total = metric + η·sec, term by term
    for step in range(1, 7):
        total = dict(tracker.series("loss/total"))[step]
        metric = dict(tracker.series("loss/metric"))[step]
        sec = dict(tracker.series("loss/sec"))[step]
        assert math.isclose(total, metric + 0.5 * sec, rel_tol=1e-5, abs_tol=1e-7)
    # 8 tracked samples every tracked_every (10) steps, the first and the last step
    assert sorted({step for step, _, _ in tracker.sample_norms}) == [1, 6]
    assert len(tracker.sample_norms) == 2 * 8
    assert {s for _, s, _ in tracker.sample_norms} == set(tracker.run_info["tracked_samples"])
    # the final evaluation ran, with a snapshot of the evaluated test embeddings
    assert {step for step, _, _ in tracker.evals} == {6}
    assert 0.0 <= dict(tracker.eval_series("recall@1"))[6] <= 1.0
    step, embeddings, labels = tracker.snapshots[-1]
    assert step == 6 and embeddings.shape == (300, 16) and labels.shape == (300,)
    assert tracker.progress == (6, 6) and tracker.flushes >= 1


def test_log_every_thins_the_series() -> None:
    tracker = InMemoryTracker()
    run_training(digits_config(training={"steps": 7}, diagnostics={"log_every": 3}), tracker)
    assert [step for step, _ in tracker.series("loss/total")] == [3, 6, 7]


@pytest.mark.parametrize("loss", LOSSES.names())
def test_short_run_for_every_loss(loss: str) -> None:
    tracker = InMemoryTracker()
    result = run_training(digits_config(objective={"name": loss}, training={"steps": 3}), tracker)
    assert result.steps_completed == 3
    assert all(math.isfinite(v) for _, v in tracker.series("loss/total"))


@pytest.mark.parametrize("head", HEADS.names())
def test_short_run_for_every_head(head: str) -> None:
    tracker = InMemoryTracker()
    config = digits_config(
        data={"split": "standard", "batch_size": 40, "samples_per_class": 4},
        model={"embedding_dim": 16},
        objective={"kind": "head", "name": head},
        training={"steps": 3},
    )
    result = run_training(config, tracker)
    assert result.steps_completed == 3
    assert "classifier_accuracy" in result.final_metrics
    if head in ("simplex", "orthoplex", "cube", "hadamard"):
        assert "vertex/angle_mean" in result.final_metrics


@pytest.mark.parametrize("regularizer", REGULARIZERS.names())
def test_short_run_for_every_regularizer(regularizer: str) -> None:
    tracker = InMemoryTracker()
    run_training(
        digits_config(regularizer={"name": regularizer, "weight": 0.1}, training={"steps": 3}),
        tracker,
    )
    assert f"loss/{regularizer}" in tracker.names()


def test_fixed_head_weights_do_not_change_during_training(tmp_path) -> None:
    config = digits_config(
        data={"split": "standard", "batch_size": 40, "samples_per_class": 4},
        model={"embedding_dim": 9},
        objective={"kind": "head", "name": "simplex", "options": {"margin": "auto"}},
        optimizer={"name": "adamw", "weight_decay": 0.1, "lr": 1e-2},
        training={"steps": 5, "checkpoint_dir": str(tmp_path)},
    )
    result = run_training(config, InMemoryTracker())
    state = load_checkpoint(result.checkpoint_path)
    from sphere_engine.heads import polytope_vertices

    vertices = state["objective"]["loss.head.vertices"]
    assert torch.allclose(vertices, polytope_vertices("simplex", 10))
    assert not any(k.startswith("loss.head.") for k in state["objective"] if "weight" in k)


@pytest.mark.parametrize(
    "sections",
    [
        {"objective": {"kind": "head", "name": "cosface"}, "regularizer": {"name": "center"}},
        {"objective": {"kind": "loss", "name": "triplet"}, "regularizer": {"name": "sec"}},
    ],
)
def test_a_module_with_two_parents_is_saved_once(tmp_path, sections: dict) -> None:
    config = digits_config(**sections, training={"steps": 2, "checkpoint_dir": str(tmp_path)})
    state = load_checkpoint(run_training(config, InMemoryTracker()).checkpoint_path)
    saved = state["objective"]
    assert saved, "the objective has state to save"
    assert all(key.startswith("loss.") for key in saved), sorted(saved)
    storages = [tensor.untyped_storage().data_ptr() for tensor in saved.values()]
    assert len(storages) == len(set(storages)), sorted(saved)


def test_same_seed_same_numbers() -> None:
    first, second = InMemoryTracker(), InMemoryTracker()
    run_training(digits_config(), first)
    run_training(digits_config(), second)
    assert first.series("loss/total") == second.series("loss/total")
    assert first.series("norm/var") == second.series("norm/var")


def test_sec_lowers_the_norm_variance() -> None:
    """Same seed, data and model: with SEC the embedding norms end far less spread."""
    common = {
        "optimizer": {"name": "sgd", "lr": 0.05, "momentum": 0.9},
        "training": {"steps": 120},
        "diagnostics": {"eval_every": 1000},
    }
    plain, sec = InMemoryTracker(), InMemoryTracker()
    run_training(digits_config(**common), plain)
    run_training(digits_config(**common, regularizer={"name": "sec", "weight": 1.0}), sec)
    plain_var = np.mean([v for _, v in plain.series("norm/var")[-20:]])
    sec_var = np.mean([v for _, v in sec.series("norm/var")[-20:]])
    assert sec_var < 0.5 * plain_var
    assert dict(sec.eval_series("norm/var"))[120] < dict(plain.eval_series("norm/var"))[120]


def test_diverging_run_fails_with_a_clear_error() -> None:
    config = digits_config(
        objective={"kind": "head", "name": "linear"},
        data={"split": "standard", "batch_size": 40, "samples_per_class": 4},
        optimizer={"name": "sgd", "lr": 1e8, "momentum": 0.0},
        training={"steps": 50},
    )
    tracker = InMemoryTracker()
    with pytest.raises(
        TrainingDivergedError,
        match=r"loss became (nan|inf) at step \d+; last finite values \(step \d+\)",
    ) as failure:
        run_training(config, tracker)
    assert tracker.flushes >= 1  # what was logged before the failure is kept
    # read one step late, the divergence is still named at its own step, every step
    # before it kept
    diverged, last_finite = map(int, re.findall(r"step (\d+)", str(failure.value)))
    losses = dict(tracker.series("loss/total"))
    assert last_finite == diverged - 1 and sorted(losses) == list(range(1, diverged + 1))
    assert all(math.isfinite(losses[step]) for step in range(1, diverged))
    assert not math.isfinite(losses[diverged])


def test_a_step_is_read_after_the_next_is_queued(monkeypatch) -> None:
    """The host waits for a step's values only once the next step's work is queued (the
    device never waits for the host); evaluated and last steps are read at once."""
    import sphere_engine.train as train_module

    events: list[tuple[str, int]] = []
    queue = train_module.train_step

    def queue_and_watch(setup, inputs, labels, **options):
        step = len([e for e in events if e[0] == "queued"]) + 1
        events.append(("queued", step))
        outcome = queue(setup, inputs, labels, **options)
        read = outcome.read
        outcome.read = lambda: events.append(("read", step)) or read()
        return outcome

    monkeypatch.setattr(train_module, "train_step", queue_and_watch)
    config = digits_config(diagnostics={"eval_every": 3}, training={"steps": 5})
    run_training(config, InMemoryTracker())
    assert events == [
        ("queued", 1),
        ("queued", 2),
        ("read", 1),
        ("queued", 3),
        ("read", 2),
        ("read", 3),  # evaluated: read before the model is used
        ("queued", 4),
        ("queued", 5),
        ("read", 4),
        ("read", 5),
    ]


def test_should_stop_cancels_cooperatively_and_keeps_a_checkpoint(tmp_path) -> None:
    calls = []

    def should_stop() -> bool:
        calls.append(1)
        return len(calls) > 4

    tracker = InMemoryTracker()
    config = digits_config(training={"steps": 100, "checkpoint_dir": str(tmp_path)})
    result = run_training(config, tracker, should_stop)
    assert result.cancelled and result.steps_completed == 4
    assert tracker.checkpoints[-1][0] == 4
    assert load_checkpoint(result.checkpoint_path)["step"] == 4
    assert {step for step, _, _ in tracker.evals} == {4}


def test_periodic_checkpoints(tmp_path) -> None:
    tracker = InMemoryTracker()
    config = digits_config(
        training={
            "steps": 6,
            "checkpoint_every": 2,
            "checkpoint_dir": str(tmp_path),
            "keep_checkpoints": "all",  # the default keeps the last and the best only
        }
    )
    run_training(config, tracker)
    assert [step for step, _ in tracker.checkpoints] == [2, 4, 6]
    assert sorted(p.name for p in tmp_path.glob("*.pt")) == [
        "step_00000002.pt",
        "step_00000004.pt",
        "step_00000006.pt",
    ]


def test_ntxent_trains_on_two_views() -> None:
    tracker = InMemoryTracker()
    config = digits_config(
        objective={"name": "ntxent"}, data={"samples_per_class": 0, "batch_size": 16}
    )
    run_training(config, tracker)
    # positives are the two views of each image: their cosine is well above the negatives'
    assert all(gap > 0 for _, gap in tracker.series("cos/gap"))


def test_tracked_samples_follow_their_own_cadence() -> None:
    """The tracked samples' pass runs on logged steps that are multiples of
    tracked_every (and the first and last): their turns span those steps."""
    tracker = InMemoryTracker()
    config = digits_config(
        training={"steps": 9},
        diagnostics={"log_every": 2, "tracked_every": 4, "eval_every": 1000},
    )
    run_training(config, tracker)
    assert sorted({step for step, _, _ in tracker.sample_norms}) == [2, 4, 8, 9]
    angles = dict(tracker.series("direction/angle_mean"))
    assert [step for step, value in angles.items() if math.isfinite(value)] == [4, 8, 9]
    assert set(angles) <= {2, 4, 8, 9}
