"""Study presets: the CPU study passes every check of a study file; the MLRC presets
carry the protocol's settings (SCIENCE.md §9) and build valid run configs."""

from __future__ import annotations

import pytest

from sphere_engine.config import RunConfig
from sphere_engine.experiments.studies import STUDY_PRESETS, study_preset
from worker.study.runs import reproduction_config, trial_config
from worker.study.spec import check_spec, load_spec, parse_spec


def test_the_cpu_study_is_the_issues_design_and_passes_its_checks() -> None:
    spec = load_spec("study-cpu")
    assert sorted(arm.name for arm in spec.arms) == ["ms", "ms-sec", "triplet", "triplet-sec"]
    assert (spec.trials, spec.folds, spec.reproductions) == (8, 2, 3)
    assert spec.experiment == "study-cpu"
    # digits' 5 training classes: 2 folds leave 2-3 classes a side, so P = 2
    data = spec.base["data"]
    assert data["name"] == "digits"
    assert data["batch_size"] // data["samples_per_class"] == 2


@pytest.mark.parametrize("name", ["mlrc-cub200", "mlrc-cars196", "mlrc-sop"])
def test_mlrc_presets_carry_the_protocol(name: str) -> None:
    spec = parse_spec(study_preset(name))
    assert (spec.trials, spec.folds, spec.reproductions, spec.metric) == (50, 4, 10, "map@r")
    for arm in spec.arms:
        config = RunConfig.from_dict(trial_config(spec, arm.config(spec.base), fold=3))
        assert (config.model.name, config.model.embedding_dim) == ("bninception", 128)
        assert config.model.frozen_bn is True
        optimizer = config.optimizer
        assert (optimizer.name, optimizer.lr, optimizer.weight_decay, optimizer.momentum) == (
            "rmsprop", 1e-6, 1e-4, 0.9,
        )  # fmt: skip
        assert config.data.batch_size == 32 and config.data.image_size == 227
        # Resize(256), then RandomResizedCrop(227, scale=(0.16, 1)) / CenterCrop(227)
        assert (config.data.crop_scale, config.data.resize) == ([0.16, 1.0], 256)
        assert (config.data.folds, config.data.fold) == (4, 3)
        assert config.training.early_stop_patience == 9
        assert config.diagnostics.eval_every == 100
        repro = RunConfig.from_dict(reproduction_config(spec, arm.config(spec.base), 2, 1))
        assert repro.evaluation.final_test and repro.training.seed != config.training.seed
        assert (repro.data.crop_scale, repro.data.resize) == ([0.16, 1.0], 256)


def test_presets_are_offered_by_name_with_overrides() -> None:
    assert set(STUDY_PRESETS) == {"study-cpu", "mlrc-cub200", "mlrc-cars196", "mlrc-sop"}
    spec = load_spec("study-cpu", ["training.steps=120"])
    assert spec.base["training"]["steps"] == 120
    with pytest.raises(ValueError, match="nor is it a preset"):
        load_spec("no-such-study.toml")


def test_a_one_fold_study_holds_out_a_quarter_and_reproduces_on_all_training_classes() -> None:
    table = study_preset("study-cpu")
    table["folds"] = 1
    spec = parse_spec(table)
    check_spec(spec)
    arm = spec.arms[0]
    trial = RunConfig.from_dict(trial_config(spec, arm.config(spec.base), 0))
    assert (trial.data.folds, trial.data.fold) == (4, 0)
    repro = RunConfig.from_dict(reproduction_config(spec, arm.config(spec.base), 0, 0))
    assert repro.data.folds == 0 and repro.evaluation.final_test
    assert repro.diagnostics.eval_every == repro.training.steps  # tested once, at the end
