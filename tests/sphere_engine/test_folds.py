"""Validation folds (SCIENCE.md §9): the fold rule, its config errors, the folds applied to
every dataset kind, and short digits runs that validate on a fold and test once."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sphere_engine.catalogue import Source, find
from sphere_engine.config import ConfigError, RunConfig
from sphere_engine.config.folds import (
    class_ranges,
    expand_class_ranges,
    fold_classes,
)
from sphere_engine.data import create_dataset
from sphere_engine.data.folds import fold_splits
from sphere_engine.evaluation.concatenated import concatenate_embeddings, concatenated_metrics
from sphere_engine.metrics import retrieval_protocol_metrics
from sphere_engine.models.build import build_backbone
from sphere_engine.optim import build_optimizer
from sphere_engine.tracking import InMemoryTracker
from sphere_engine.train import load_checkpoint, run_training
from sphere_engine.training.early_stopping import ValidationWatch
from sphere_engine.training.resume import resume
from sphere_engine.training.setup import prepare_training
from sphere_engine.validation import validate

# ----------------------------------------------------------------------------- the rule


@pytest.mark.parametrize(("count", "folds"), [(8, 4), (5, 2), (10, 3), (7, 7), (100, 4)])
def test_folds_are_class_disjoint_contiguous_and_cover_every_training_class(count, folds):
    classes = list(range(10, 10 + count))[::-1]  # any order, any ids
    seen: list[int] = []
    for fold in range(folds):
        train, validation = fold_classes(classes, folds, fold)
        assert not set(train) & set(validation)
        assert sorted(train + validation) == sorted(classes)
        size = len(validation)
        assert count // folds <= size <= -(-count // folds)  # a 1/k of the classes
        assert validation == list(range(validation[0], validation[0] + size))  # contiguous
        seen += validation
    assert sorted(seen) == sorted(classes)  # disjoint across folds, covering all


def test_fold_numbering_is_mlrcs_and_training_classes_wrap():
    # 8 classes, 4 folds: chunks [0,1] [2,3] [4,5] [6,7]; fold i validates on chunk i-1
    assert fold_classes(range(8), 4, 0) == ([0, 1, 2, 3, 4, 5], [6, 7])
    assert fold_classes(range(8), 4, 1) == ([2, 3, 4, 5, 6, 7], [0, 1])
    assert fold_classes(range(8), 4, 2) == ([4, 5, 6, 7, 0, 1], [2, 3])  # wraps past 7
    assert fold_classes(range(8), 4, 3) == ([6, 7, 0, 1, 2, 3], [4, 5])


def test_class_ranges_round_trip():
    ids = [9, 3, 4, 5, 11, 12, 0]
    assert class_ranges(ids) == [[0, 0], [3, 5], [9, 9], [11, 12]]
    assert expand_class_ranges(class_ranges(ids)) == sorted(ids)
    assert class_ranges([]) == []


# ----------------------------------------------------------------------------- config


def small(**sections: dict) -> dict:
    base: dict = {
        "data": {"name": "digits", "batch_size": 12, "samples_per_class": 4},
        "model": {"name": "mlp", "embedding_dim": 16},
        "training": {"steps": 10},
    }
    for name, values in sections.items():
        base.setdefault(name, {}).update(values)
    return base


@pytest.mark.parametrize(
    ("sections", "path", "message"),
    [
        ({"data": {"folds": 1}}, "data.folds", "1 is not allowed"),
        (
            {"data": {"folds": 2, "split": "standard"}},
            "data.folds",
            "need data.split = 'class_disjoint'",
        ),
        ({"data": {"folds": 3, "fold": 3}}, "data.fold", r"3 is not a fold of data.folds = 3"),
        ({"data": {"fold": 1}}, "data.fold", "0 without data.folds"),
        (
            {"training": {"early_stop_metric": "loss/total"}},
            "training.early_stop_metric",
            "'loss/total' is not an evaluation metric",
        ),
        (
            {"training": {"early_stop_metric": "test/map@r"}},
            "training.early_stop_metric",
            "'test/map@r' is not an evaluation metric",
        ),
        ({"training": {"early_stop_patience": -1}}, "training.early_stop_patience", "minimum"),
    ],
)
def test_bad_fold_and_early_stop_settings_are_one_line_config_errors(sections, path, message):
    with pytest.raises(ConfigError, match=message) as caught:
        RunConfig.from_dict(small(**sections))
    assert caught.value.path == path and "\n" not in str(caught.value)


def test_more_folds_than_training_classes_is_refused_at_validation():
    config = RunConfig.from_dict(small(data={"folds": 6}))  # digits trains on 5 classes
    with pytest.raises(ConfigError, match="6 folds but the training split has only 5") as caught:
        validate(config)
    assert caught.value.path == "data.folds"
    validate(RunConfig.from_dict(small(data={"folds": 5, "batch_size": 8})))


def test_a_fold_trains_on_fewer_classes_and_validation_counts_them():
    # 2 folds of digits' 5 training classes: fold 0 validates on 3 and trains on 2, so a
    # batch of 3 classes cannot be drawn
    config = RunConfig.from_dict(small(data={"folds": 2, "batch_size": 12}))
    with pytest.raises(ConfigError, match="only 2 classes") as caught:
        validate(config)
    assert caught.value.path == "data.batch_size"


def test_new_fields_have_their_defaults_when_an_old_config_is_read():
    config = RunConfig.from_dict(small())  # written before the fields existed
    assert (config.data.folds, config.data.fold) == (0, 0)
    assert (config.training.early_stop_patience, config.training.early_stop_metric) == (
        0,
        "map@r",
    )
    assert config.evaluation.final_test is False


# ----------------------------------------------------------------------------- datasets


def _original(dataset) -> np.ndarray:
    return np.asarray(dataset.classes)[np.asarray(dataset.labels)]


@pytest.mark.parametrize(
    ("name", "options"), [("digits", {}), ("synthetic", {"num_classes": 12, "dim": 4})]
)
def test_fold_splits_of_in_memory_datasets(name, options):
    splits = create_dataset(name, **options)
    original_train = _original(splits.train)
    folded = fold_splits(splits, 2, 1)
    train, validation = fold_classes(splits.train.classes, 2, 1)
    assert sorted(folded.train.classes.tolist()) == sorted(train)
    assert folded.validation.classes.tolist() == validation
    assert folded.test is splits.test and folded.evaluated is folded.validation
    assert folded.num_classes_train == len(train) and folded.info().num_classes_train == len(train)
    # every training sample lands on exactly one side, with its inputs and its class
    assert len(folded.train) + len(folded.validation) == len(splits.train)
    for part, wanted in ((folded.train, train), (folded.validation, validation)):
        assert set(_original(part).tolist()) == set(wanted)
        assert part.labels.max() == len(wanted) - 1  # remapped 0..C-1
        rows = np.flatnonzero(np.isin(original_train, wanted))
        x, y = part.get_batch(torch.arange(len(part)))
        expected, _ = splits.train.get_batch(torch.from_numpy(rows))
        torch.testing.assert_close(x, expected)
        assert y.tolist() == part.labels.tolist()
    assert fold_splits(splits, 0, 0) is splits


# ----------------------------------------------------------------------------- runs


def fold_run(**sections: dict) -> RunConfig:
    """Fold 1 of 2 over digits' training classes 0-4: validation 0-1, training 2-4. Every
    checkpoint is kept: the tests resume from, and compare with, intermediate ones."""
    base = small(
        data={"folds": 2, "fold": 1, "batch_size": 12, "samples_per_class": 4},
        training={"steps": 12, "seed": 0, "keep_checkpoints": "all"},
        diagnostics={"eval_every": 4, "tracked_samples": 4, "eval_max_samples": 300},
        evaluation={"background": False, "verification": False},
    )
    for name, values in sections.items():
        base.setdefault(name, {}).update(values)
    config = RunConfig.from_dict(base)
    validate(config)
    return config


def test_a_fold_run_never_evaluates_a_test_class():
    # the test protocol is query-gallery; validation is leave-one-out whatever it is
    config = fold_run(evaluation={"retrieval_protocol": "query_gallery"})
    tracker = InMemoryTracker()
    result = run_training(config, tracker)
    assert result.steps_completed == 12 and not result.stopped_early
    classes = tracker.run_info["data_classes"]
    assert classes == {"train": [[2, 4]], "validation": [[0, 1]], "test": [[5, 9]]}
    assert tracker.run_info["evaluated_on"] == "validation"
    assert "final_test_step" not in tracker.run_info
    validation = set(expand_class_ranges(classes["validation"]))
    assert [step for step, _, _ in tracker.snapshots] == [4, 8, 12]
    for _, _, labels in tracker.snapshots:
        assert set(labels.tolist()) <= validation
    for _, results in tracker.query_results:
        assert set(results.classes["class_name"]) <= {"0", "1"}
    queries = dict((s, v) for s, k, v in tracker.evals if k == "retrieval/queries")
    evaluated = min(300, tracker.run_info["validation_samples"])
    assert queries == {4: evaluated, 8: evaluated, 12: evaluated}  # every sample queried
    assert not any(key.startswith("test/") for _, key, _ in tracker.evals)


def test_the_final_test_runs_once_on_all_test_samples_with_the_best_weights(tmp_path):
    config = fold_run(
        evaluation={"final_test": True, "retrieval_protocol": "query_gallery"},
        training={"checkpoint_every": 4, "keep_checkpoints": "all"},
        diagnostics={"eval_max_samples": 100},
    )
    tracker = InMemoryTracker()
    result = run_training(config, tracker, checkpoint_dir=str(tmp_path))
    test_steps = {step for step, key, _ in tracker.evals if key.startswith("test/")}
    assert test_steps == {12} and tracker.run_info["final_test_step"] == 12
    tested = {key: value for _, key, value in tracker.evals if key.startswith("test/")}
    assert {"test/precision@1", "test/r_precision", "test/map@r"} <= set(tested)
    assert result.final_metrics["test/map@r"] == tested["test/map@r"]
    # declared in the catalogue: MLRC's three by name, every other key by the family
    assert all(find(key, Source.EVALUATION) is not None for key in tested)
    for key in ("test/precision@1", "test/r_precision", "test/map@r"):
        assert find(key, Source.EVALUATION).key == key
        assert find(key, Source.EVALUATION).higher_is_better is True

    path = tmp_path / "test_embeddings.npz"
    assert tracker.run_info["test_embeddings"] == str(path.resolve())
    saved = np.load(path)
    test = create_dataset("digits").test
    assert saved["ids"].tolist() == list(range(len(test)))  # all of it, not 100
    assert saved["labels"].tolist() == _original(test).tolist()
    assert saved["embeddings"].shape == (len(test), 16)
    # the test protocol's queries; its metrics are those of the saved embeddings
    assert 0 < saved["is_query"].sum() < len(test)
    expected = retrieval_protocol_metrics(
        saved["embeddings"], saved["labels"], protocol="query_gallery", is_query=saved["is_query"]
    )
    assert tested["test/map@r"] == pytest.approx(expected["map@r"])
    assert tested["test/retrieval/queries"] == saved["is_query"].sum()

    # the weights of the best validation MAP@R (a checkpoint was written at each one)
    validation = [(step, value) for step, key, value in tracker.evals if key == "map@r"]
    best_step = max(validation, key=lambda pair: (pair[1], -pair[0]))[0]
    assert best_step != 12  # (seed 0: step 4) the last step's weights would differ
    model, _ = build_backbone(config.model, (64,))
    model.load_state_dict(load_checkpoint(tmp_path / f"step_{best_step:08d}.pt")["model"])
    model.eval()
    with torch.no_grad():
        inputs, _ = test.get_batch(torch.arange(len(test)))
        expected_embeddings = model(inputs).numpy()
    np.testing.assert_allclose(saved["embeddings"], expected_embeddings, rtol=1e-5, atol=1e-6)


def test_early_stop_ends_the_run_finished_with_its_step():
    # lr 0: the validation MAP@R never improves after the first evaluation
    config = fold_run(
        optimizer={"name": "rmsprop", "lr": 0.0},
        training={"steps": 100, "early_stop_patience": 2},
        evaluation={"final_test": True},
    )
    tracker = InMemoryTracker()
    result = run_training(config, tracker)
    assert result.stopped_early and not result.cancelled
    assert result.steps_completed == 12
    first = next(value for _, key, value in tracker.evals if key == "map@r")
    assert result.message == (
        f"stopped early at step 12: no improvement of map@r in 2 evaluations "
        f"(best {first:.4g} at step 4)"
    )
    assert {step for step, key, _ in tracker.evals if key == "map@r"} == {4, 8, 12}
    assert {step for step, key, _ in tracker.evals if key.startswith("test/")} == {12}


def test_early_stopping_on_a_metric_the_run_does_not_compute_fails_at_once():
    config = fold_run(
        training={"early_stop_patience": 2, "early_stop_metric": "classifier_accuracy"}
    )
    with pytest.raises(ConfigError, match="'classifier_accuracy' is not computed") as caught:
        run_training(config, InMemoryTracker())
    assert caught.value.path == "training.early_stop_metric"


def test_rmsprop_takes_momentum_and_weight_decay_from_the_config():
    config = RunConfig.from_dict(
        small(optimizer={"name": "rmsprop", "lr": 1e-3, "momentum": 0.5, "weight_decay": 1e-4})
    )
    model = torch.nn.Linear(4, 2)
    optimizer = build_optimizer(config.optimizer, model, [])
    assert isinstance(optimizer, torch.optim.RMSprop)
    group = optimizer.param_groups[0]
    assert (group["lr"], group["momentum"], group["weight_decay"]) == (1e-3, 0.5, 1e-4)
    before = model.weight.detach().clone()
    model(torch.ones(3, 4)).sum().backward()
    optimizer.step()
    assert not torch.equal(before, model.weight)


def test_the_watch_follows_the_metrics_direction_and_keeps_the_best_weights():
    model = torch.nn.Linear(2, 2)
    watch = ValidationWatch("verification/eer", patience=2, keep_best=True)  # lower is better
    for step, value in ((1, 0.3), (2, 0.2), (3, float("nan")), (4, 0.25)):
        with torch.no_grad():
            model.weight.fill_(step)
        watch.captured(step, model)
        watch.observe(step, {"verification/eer": value})
    assert (watch.best, watch.best_step, watch.since_best) == (0.2, 2, 2)
    assert watch.should_stop
    assert torch.all(watch.best_weights["weight"] == 2)
    off = ValidationWatch("map@r", patience=0)
    off.observe(1, {"map@r": 0.5})
    off.observe(2, {"map@r": 0.4})
    assert not off.should_stop and off.best_weights is None


def test_a_resumed_run_goes_on_counting_from_its_checkpoint(tmp_path):
    config = fold_run(
        optimizer={"name": "rmsprop", "lr": 0.0},
        training={
            "steps": 100,
            "early_stop_patience": 2,
            "checkpoint_every": 4,
            "keep_checkpoints": "all",
        },
        evaluation={"final_test": True},
    )
    first = run_training(config, InMemoryTracker(), checkpoint_dir=str(tmp_path / "a"))
    assert first.stopped_early and first.steps_completed == 12
    # resumed after step 8 (one miss counted, step 4's weights the best): the miss at 12
    # is the second, and the final test evaluates step 4's weights again
    tracker = InMemoryTracker()
    resumed = run_training(
        config,
        tracker,
        resume_from=tmp_path / "a" / "step_00000008.pt",
        checkpoint_dir=str(tmp_path / "b"),
    )
    assert resumed.stopped_early and resumed.steps_completed == 12
    assert resumed.message == first.message


def test_a_resumed_run_keeps_the_best_validation_weights(tmp_path):
    config = fold_run(
        evaluation={"final_test": True}, training={"checkpoint_every": 4, "keep_checkpoints": "all"}
    )
    tracker = InMemoryTracker()
    run_training(config, tracker, checkpoint_dir=str(tmp_path))
    validation = [(step, value) for step, key, value in tracker.evals if key == "map@r"]
    best_step = max(validation[:2], key=lambda pair: (pair[1], -pair[0]))[0]  # by step 8
    setup = prepare_training(config)
    assert resume(setup, tmp_path / "step_00000008.pt") == 8
    assert setup.watch.best_step == best_step
    saved = load_checkpoint(tmp_path / f"step_{best_step:08d}.pt")["model"]
    other = load_checkpoint(tmp_path / f"step_{12 - best_step:08d}.pt")["model"]
    assert any(not torch.equal(saved[k], other[k]) for k in saved)  # lr > 0: they differ
    for key, value in saved.items():
        torch.testing.assert_close(setup.watch.best_weights[key], value, rtol=0, atol=0)


def test_the_fold_runs_of_a_reproduction_concatenate(tmp_path):
    paths = []
    for fold in (0, 1):
        config = fold_run(data={"fold": fold, "batch_size": 8}, evaluation={"final_test": True})
        tracker = InMemoryTracker()
        run_training(config, tracker, checkpoint_dir=str(tmp_path / f"fold{fold}"))
        paths.append(tracker.run_info["test_embeddings"])
    joined = concatenate_embeddings(paths)
    assert joined["embeddings"].shape == (len(create_dataset("digits").test), 32)
    metrics = concatenated_metrics(paths)
    assert {"precision@1", "r_precision", "map@r"} <= set(metrics)
    assert 0 < metrics["map@r"] <= 1
