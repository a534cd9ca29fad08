"""sphere_engine.experiments.matching: an untagged run with a variant's config is that
variant's, whatever its seed, steps, device or data folder."""

from __future__ import annotations

from sphere_engine.config import RunConfig
from sphere_engine.experiments import get_experiment, plan
from sphere_engine.experiments.matching import variant_matcher


def _stored(config: dict) -> dict:
    return RunConfig.from_dict(config).to_dict()  # as worker.submit stores it


def test_a_planned_runs_config_matches_its_variant_at_any_seed_steps_and_device() -> None:
    experiment = get_experiment("sec-ablation")
    match = variant_matcher(experiment)
    for run in plan(experiment, seeds=(7,), steps_scale=0.1):
        config = _stored(run.config)
        config["training"]["device"] = "cpu"
        config["data"]["root"] = "/somewhere/else"
        assert match(config) == run.variant


def test_a_changed_learning_rate_or_weight_is_no_variant() -> None:
    experiment = get_experiment("sec-ablation")
    match = variant_matcher(experiment)
    (run,) = plan(experiment, seeds=(0,), variants=["SEC η=0.5"])
    config = _stored(run.config)
    assert match(config) == "SEC η=0.5"
    config["regularizer"]["weight"] = 0.25
    assert match(config) is None
    assert match({}) is None


def test_an_experiment_over_a_data_root_matches_wherever_the_files_are() -> None:
    experiment = get_experiment("reponet")
    match = variant_matcher(experiment)
    (run, *_) = plan(experiment, seeds=(0,), data_root="/data/mnist")
    assert match(_stored(run.config)) == run.variant


def test_a_run_stored_before_the_fold_and_early_stop_fields_still_matches() -> None:
    experiment = get_experiment("sec-ablation")
    match = variant_matcher(experiment)
    (run, *_) = plan(experiment, seeds=(0,))
    old = _stored(run.config)
    for section, field in (
        ("data", "folds"),
        ("data", "fold"),
        ("training", "early_stop_patience"),
        ("training", "early_stop_metric"),
        ("evaluation", "final_test"),
    ):
        del old[section][field]  # as a run recorded before these fields existed
    assert match(old) == run.variant
    # a fold of the variant trains on other classes: not the variant
    folded = _stored(run.config)
    folded["data"]["folds"], folded["data"]["fold"] = 2, 1
    assert match(folded) is None
    # a final test only adds an evaluation: still the variant
    tested = _stored(run.config)
    tested["evaluation"]["final_test"] = True
    assert match(tested) == run.variant


def test_a_run_stored_when_presets_evaluated_once_still_matches() -> None:
    experiment = get_experiment("sec-ablation")
    match = variant_matcher(experiment)
    for run in plan(experiment, seeds=(0,)):
        old = _stored(run.config)
        assert old["diagnostics"]["eval_every"] < experiment.steps
        old["diagnostics"]["eval_every"] = experiment.steps  # one evaluation, at the end
        assert match(old) == run.variant


def test_a_run_stored_before_the_crop_fields_still_matches() -> None:
    experiment = get_experiment("sec-cub200")
    match = variant_matcher(experiment)
    (run, *_) = plan(experiment, seeds=(0,), data_root="/data/cub")
    old = _stored(run.config)
    del old["data"]["crop_scale"], old["data"]["resize"]  # recorded before the fields
    assert match(old) == run.variant
    data = RunConfig.from_dict(old).data  # read with the defaults
    assert (data.crop_scale, data.resize) == ([0.08, 1.0], 0)
    # other crops are another augmentation: not the variant
    for field, value in (("crop_scale", [0.16, 1.0]), ("resize", 256)):
        cropped = _stored(run.config)
        cropped["data"][field] = value
        assert match(cropped) is None
