"""RunConfig: round trips, overrides and the clear error messages."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
import subprocess
import sys

import pytest

from sphere_engine.config import SECTIONS, RunConfig, apply_overrides, field_help, parse_override


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
            small(optimizer={"name": "lbfgs"}),
            r"optimizer.name: 'lbfgs' is not allowed; choose one of 'sgd', 'adam', 'adamw', "
            r"'rmsprop'",
        ),
        (
            small(regularizer={"name": "sec", "weight": -0.1}),
            r"regularizer.weight: -0.1 is below the minimum 0.0",
        ),
        (
            small(data={"batch_size": 30, "samples_per_class": 4}),
            r"data.batch_size: 30 is not a multiple of data.samples_per_class 4",
        ),
        (small(regularizer={"weight": 1.0}), r"regularizer.weight: 1.0 is set but .* 'none'"),
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


def test_from_dict_leaves_its_input_unchanged() -> None:
    data = small(
        data={"name": "synthetic", "options": {"num_classes": 6, "noise": 1}},
        model={"options": {"hidden_dims": [32, 16]}},
        objective={"options": {"margin": 1}},
        regularizer={"name": "sec", "weight": 1, "options": {"momentum": 1}},
    )
    before = copy.deepcopy(data)
    config = RunConfig.from_dict(data)
    assert data == before
    # Nor does the config share nested values with it: changing one leaves the other.
    config.model.options["hidden_dims"].append(8)
    config.objective.options["margin"] = 0.5
    assert data == before


def test_from_dict_imports_no_torch_and_no_registry() -> None:
    code = (
        "import sys\n"
        "from sphere_engine.config import RunConfig\n"
        "RunConfig.from_dict({'data': {'name': 'mnist', 'root': '/nonexistent'},"
        " 'objective': {'kind': 'head', 'name': 'simplex'}})\n"
        "bad = [m for m in sys.modules if m == 'torch' or m.startswith('sphere_engine.')"
        " and m.split('.')[1] in ('data', 'models', 'losses', 'heads', 'regularizers',"
        " 'validation')]\n"
        "print(','.join(bad) or 'clean')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "clean"


def test_from_dict_defers_registry_and_data_checks() -> None:
    # Unknown names and a missing dataset folder are validate()'s job, not from_dict's.
    config = RunConfig.from_dict(
        small(data={"name": "imagenet", "root": "/nonexistent"}, objective={"name": "nope"})
    )
    assert config.data.name == "imagenet" and config.objective.name == "nope"


def test_name_help_texts_list_no_registered_names() -> None:
    from sphere_engine.validation import name_choices

    registered = (
        {
            name
            for section in ("data", "model", "regularizer")
            for name in name_choices(section)
            if name != "none"
        }
        | set(name_choices("objective", "loss"))
        | set(name_choices("objective", "head"))
    )
    for section in ("data", "model", "objective", "regularizer"):
        for fld in dataclasses.fields(SECTIONS[section]):
            words = set(re.findall(r"[a-z0-9_]+", fld.metadata["help"].lower()))
            assert not words & registered, f"{section}.{fld.name} hard-codes {words & registered}"
    assert {field_help(s, "name").get("registry") for s in ("data", "model", "regularizer")} == {
        "dataset",
        "model",
        "regularizer",
    }


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("optimizer.lr=nan", "optimizer.lr: nan is not a finite number"),
        ("optimizer.lr=inf", "optimizer.lr: inf is not a finite number"),
        ("optimizer.lr=-inf", "optimizer.lr: -inf is not a finite number"),
        ("optimizer.momentum=nan", "optimizer.momentum: nan is not a finite number"),
        ("optimizer.head_lr=nan", "optimizer.head_lr: nan is not a finite number"),
        ("regularizer.weight=nan", "regularizer.weight: nan is not a finite number"),
        ("schedule.gamma=+inf", "schedule.gamma: inf is not a finite number"),
        ("objective.options.margin=nan", "objective.options.margin: nan is not a finite number"),
        (
            "model.options.hidden_dims=[32, inf]",
            "model.options.hidden_dims[1]: inf is not a finite number",
        ),
    ],
)
def test_non_finite_numbers_are_refused_naming_the_field(tmp_path, override, message) -> None:
    path = tmp_path / "run.toml"
    path.write_text('[training]\nsteps = 10\n[regularizer]\nname = "sec"\n')
    with pytest.raises(ValueError) as caught:
        RunConfig.from_toml(path, [override])
    assert str(caught.value) == message  # one line, naming the field
