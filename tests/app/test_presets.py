"""app/presets.py: the presets are the declared experiments, and their runs count in the
report."""

from __future__ import annotations

from pathlib import Path

import pytest

from app import data
from app.presets import PRESETS
from db.experiment_runs import experiment_runs
from sphere_engine.config import ConfigError, RunConfig
from sphere_engine.experiments import EXPERIMENT_TAG, EXPERIMENTS, VARIANT_TAG
from sphere_engine.validation import validate


@pytest.mark.parametrize("key", sorted(PRESETS))
def test_every_preset_run_validates(key):
    preset = PRESETS[key]
    assert len(preset.configs) == len(preset.names) == len(preset.tags) >= 1
    assert len(set(preset.names)) == len(preset.names)
    for name, config in preset.runs():
        run_config = RunConfig.from_dict(config)
        root = run_config.data.root
        if root and not Path(root).exists():
            # A preset over local files (MNIST under ../shared/data on the development
            # machines) is refused exactly for its missing root where the files are absent.
            with pytest.raises(ConfigError, match=r"^data\.root: "):
                validate(run_config)
        else:
            validate(run_config)  # raises ConfigError naming the field if not
        assert name


def test_every_experiment_is_a_preset_of_one_run_per_variant():
    for name, experiment in EXPERIMENTS.items():
        preset = PRESETS[name]
        assert [run.variant for run in preset.planned] == [v.name for v in experiment.variants]
        assert {run.seed for run in preset.planned} == {experiment.seeds[0]}
        for run, variant in zip(preset.planned, experiment.variants, strict=True):
            expected = experiment.config(
                variant, experiment.seeds[0], experiment.steps, run.config["data"].get("root")
            )
            assert run.config == expected


def test_a_preset_run_counts_in_the_report(store, monkeypatch):
    import worker.submit

    monkeypatch.setattr(worker.submit, "broker_url", lambda: "redis://127.0.0.1:1/0")
    monkeypatch.setattr(worker.submit, "_enqueue", lambda *_: None)
    preset = PRESETS["sec-ablation"]
    ids = data.launch_runs(preset.configs, names=preset.names, tags=["mine"], run_tags=preset.tags)
    for run_id in ids:  # as a worker would end them
        store.start_run(run_id)
        store.set_status(run_id, "finished")
    found = experiment_runs(store, f"{EXPERIMENT_TAG}sec-ablation", VARIANT_TAG)
    assert sorted(found["run_id"]) == sorted(ids)
    assert sorted(found["variant"]) == sorted(v.name for v in EXPERIMENTS["sec-ablation"].variants)
    assert "mine" in store.get_run(ids[0]).tags


def test_the_smoke_preset_stays_out_of_the_report():
    (run,) = PRESETS["smoke"].planned
    assert run.tags == () and run.config["training"]["steps"] == 60
    assert run.config["regularizer"]["name"] == "sec"


def test_runs_returns_copies():
    preset = PRESETS["smoke"]
    _, config = preset.runs()[0]
    config["training"]["steps"] = 1
    assert preset.configs[0]["training"]["steps"] == 60


@pytest.mark.parametrize("key", sorted(PRESETS))
def test_every_preset_run_evaluates_at_least_five_times(key):
    """A curve of R@1, not one point (and sliders over several evaluations)."""
    for _, config in PRESETS[key].runs():
        steps, every = config["training"]["steps"], config["diagnostics"]["eval_every"]
        evaluations = steps // every + (1 if steps % every else 0)  # the last step is one
        assert evaluations >= 5, (key, steps, every)
