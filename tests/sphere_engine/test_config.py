"""RunConfig: round trips, overrides and the clear error messages."""

from __future__ import annotations

import json

import pytest

from sphere_engine.config import RunConfig, apply_overrides, parse_override


def small(**sections: dict) -> dict:
    base = {
        "data": {"name": "digits", "batch_size": 20, "samples_per_class": 4},
        "model": {"name": "mlp", "embedding_dim": 16},
        "objective": {"kind": "loss", "name": "triplet"},
        "training": {"steps": 10},
    }
    for name, values in sections.items():
        base.setdefault(name, {}).update(values)
    return base


def test_defaults_validate() -> None:
    config = RunConfig.from_dict({})
    assert config.data.name == "digits"
    assert config.data.batch_size % config.data.samples_per_class == 0


def test_json_round_trip_is_exact() -> None:
    config = RunConfig.from_dict(
        small(regularizer={"name": "sec", "weight": 0.5, "options": {"momentum": 0.9}})
    )
    again = RunConfig.from_json(config.to_json())
    assert again == config
    assert json.loads(again.to_json())["regularizer"]["options"] == {"momentum": 0.9}


def test_toml_file_with_overrides(tmp_path) -> None:
    path = tmp_path / "run.toml"
    path.write_text(
        '[data]\nname = "digits"\nbatch_size = 20\nsamples_per_class = 4\n[training]\nsteps = 50\n'
    )
    config = RunConfig.from_toml(
        path,
        ["optimizer.lr=0.01", "optimizer.name=sgd", "regularizer.name=sec", "regularizer.weight=1"],
    )
    assert config.training.steps == 50
    assert config.optimizer.lr == 0.01 and config.optimizer.name == "sgd"
    assert config.regularizer.weight == 1.0 and isinstance(config.regularizer.weight, float)


def test_parse_override_values() -> None:
    assert parse_override("schedule.milestones=[10, 20]") == (["schedule", "milestones"], [10, 20])
    assert parse_override("data.name=mnist") == (["data", "name"], "mnist")
    assert parse_override("objective.options.margin=0.5") == (
        ["objective", "options", "margin"],
        0.5,
    )
    with pytest.raises(ValueError, match=r"expected section\.key=value"):
        parse_override("training.steps")
    assert apply_overrides({"a": {"b": 1}}, ["a.b=2"]) == {"a": {"b": 2}}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"trainig": {}}, r"trainig: unknown config section; allowed: data, model"),
        (small(training={"stepz": 3}), r"training.stepz: unknown setting; allowed: .*steps"),
        (small(training={"steps": "many"}), r"training.steps: 'many' is not a valid int"),
        (small(training={"steps": 0}), r"training.steps: 0 is below the minimum 1"),
        (
            small(optimizer={"name": "rmsprop"}),
            r"optimizer.name: 'rmsprop' is not allowed; choose one of 'sgd', 'adam', 'adamw'",
        ),
        (
            small(regularizer={"name": "sec", "weight": -0.1}),
            r"regularizer.weight: -0.1 is below the minimum 0.0",
        ),
        (
            small(data={"samples_per_class": 1}),
            r"data.samples_per_class: 1 .* needs at least 2 samples per class",
        ),
        (
            small(data={"batch_size": 30, "samples_per_class": 4}),
            r"data.batch_size: 30 is not a multiple of data.samples_per_class 4",
        ),
        (
            small(data={"batch_size": 64, "samples_per_class": 4}),
            r"16 classes per batch, but the class_disjoint training split of 'digits' has only 5",
        ),
        (
            small(data={"name": "imagenet"}),
            r"data.name: unknown dataset 'imagenet'; known: .*digits",
        ),
        (small(objective={"name": "tripplet"}), r"unknown loss 'tripplet'; known: .*triplet"),
        (
            small(objective={"options": {"marginn": 0.2}}),
            r"objective.options.marginn: unknown option 'marginn' for loss 'triplet'",
        ),
        (
            small(objective={"options": {"margin": "wide"}}),
            r"objective.options.margin: 'wide' is not a valid",
        ),
        (small(regularizer={"name": "secc", "weight": 1.0}), r"unknown regularizer 'secc'"),
        (small(regularizer={"weight": 1.0}), r"regularizer.weight: 1.0 is set but .* 'none'"),
        (
            small(
                data={"split": "standard", "batch_size": 40, "samples_per_class": 4},
                model={"embedding_dim": 3},
                objective={"kind": "head", "name": "cube"},
            ),
            r"model.embedding_dim: 3 is too small for a cube head with 10 classes; .*at least 4",
        ),
        (
            small(
                model={"embedding_dim": 8},
                data={"split": "standard", "batch_size": 40, "samples_per_class": 4},
                objective={"kind": "head", "name": "simplex"},
            ),
            r"model.embedding_dim: 8 is too small for a simplex head with 10 classes; .*at least 9",
        ),
        (
            small(objective={"kind": "head", "name": "arcface", "options": {"scale": -1.0}}),
            r"objective.options",
        ),
        (
            small(schedule={"name": "step", "milestones": [50]}),
            r"schedule.milestones: 50 is outside 1..training.steps \(10\)",
        ),
    ],
)
def test_bad_configs_fail_with_clear_messages(data: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RunConfig.from_dict(data)


def test_missing_toml_file_is_named(tmp_path) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        RunConfig.from_toml(tmp_path / "nope.toml")
