"""validate(): the registry, option and data checks that RunConfig.from_dict leaves out."""

from __future__ import annotations

import copy

import pytest

from sphere_engine.config import ConfigError, RunConfig
from sphere_engine.validation import (
    name_choices,
    registry_for,
    validate,
    validated_config,
)


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


def test_a_good_config_passes_and_is_left_unchanged() -> None:
    config = RunConfig.from_dict(
        small(
            objective={"options": {"margin": 1}},
            regularizer={"name": "sec", "weight": 1.0, "options": {"momentum": 1}},
        )
    )
    before = copy.deepcopy(config)
    validate(config)
    assert config == before
    assert config.objective.options == {"margin": 1}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            small(data={"samples_per_class": 1}),
            r"^data.samples_per_class: 1 .* needs at least 2 samples per class",
        ),
        (
            small(data={"batch_size": 64, "samples_per_class": 4}),
            r"16 classes per batch, but the class_disjoint training split of 'digits' has only 5",
        ),
        (
            small(data={"name": "imagenet"}),
            r"^data.name: unknown dataset 'imagenet'; known: .*digits",
        ),
        (small(model={"name": "vgg"}), r"^model.name: unknown model 'vgg'; known: .*mlp"),
        (
            small(objective={"name": "tripplet"}),
            r"^objective.name: unknown loss 'tripplet'; known: .*triplet",
        ),
        (
            small(objective={"kind": "head", "name": "triplet"}),
            r"^objective.name: unknown head 'triplet'; known: .*arcface",
        ),
        (
            small(objective={"options": {"marginn": 0.2}}),
            r"^objective.options.marginn: unknown option 'marginn' for loss 'triplet'",
        ),
        (
            small(objective={"options": {"margin": "wide"}}),
            r"^objective.options.margin: 'wide' is not a valid",
        ),
        (
            small(objective={"options": {"margin": -1}}),
            r"^objective.options.margin: -1.0 is out of range; must be in \[0, 2\]$",
        ),
        (
            small(objective={"kind": "head", "name": "arcface", "options": {"scale": -1.0}}),
            r"^objective.options.scale: -1.0 is out of range; must be > 0$",
        ),
        (
            small(model={"options": {"activation": "swish"}}),
            r"^model.options.activation: 'swish' is not allowed",
        ),
        (
            small(data={"name": "synthetic", "options": {"num_classes": 1}}),
            r"^data.options.num_classes: 1 is out of range; must be an integer >= 2$",
        ),
        (
            small(data={"name": "image_folder", "root": "/nonexistent"}),
            r"^data.root: '/nonexistent' is not a folder",
        ),
        # A dataset read from disk needs its files under data.root (or download = true).
        (
            small(data={"name": "mnist", "root": "/nonexistent", "split": "standard"}),
            r"^data.root: MNIST files not found in '/nonexistent/MNIST/raw' \('/nonexistent' "
            r"does not exist, download is off\)",
        ),
        (small(data={"name": "cifar10", "root": ""}), r"^data.root: .*data.root is empty"),
        (small(regularizer={"name": "secc", "weight": 1.0}), r"^regularizer.name: unknown"),
        (
            small(regularizer={"name": "sec", "weight": 1.0, "options": {"momentum": 0}}),
            r"^regularizer.options.momentum: 0.0 is out of range; must be in \(0, 1\]$",
        ),
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
    ],
)
def test_validate_catches_what_from_dict_does_not(data: dict, message: str) -> None:
    config = RunConfig.from_dict(data)  # schema and cross-field rules: fine
    with pytest.raises(ConfigError, match=message) as caught:
        validate(config)
    # the field a form shows the error under is carried, not parsed from the message
    assert str(caught.value).startswith(f"{caught.value.paths[0]}: ")


def test_a_rule_between_fields_names_each_of_them() -> None:
    config = RunConfig.from_dict(small(data={"batch_size": 60, "samples_per_class": 2}))
    with pytest.raises(ConfigError) as caught:
        validated_config(config)
    assert caught.value.paths == ("data.batch_size", "data.samples_per_class")
    with pytest.raises(ConfigError) as caught:
        validated_config({"schedule": {"warmup_steps": 50}, "training": {"steps": 50}})
    assert caught.value.paths == ("schedule.warmup_steps", "training.steps")


def test_traits_decide_which_objectives_need_pk_batches() -> None:
    plain_batches = {"samples_per_class": 0, "batch_size": 20}
    validate(RunConfig.from_dict(small(data=plain_batches, objective={"name": "ntxent"})))
    validate(
        RunConfig.from_dict(small(data=plain_batches, objective={"kind": "head", "name": "linear"}))
    )
    with pytest.raises(ValueError, match="pair loss 'supcon' needs at least 2"):
        validate(RunConfig.from_dict(small(data=plain_batches, objective={"name": "supcon"})))


def test_name_choices_come_from_the_registries() -> None:
    assert name_choices("regularizer")[0] == "none"
    assert name_choices("regularizer")[1:] == registry_for("regularizer").names()
    assert "simplex" in name_choices("objective", "head")
    assert "simplex" not in name_choices("objective", "loss")
    with pytest.raises(ValueError, match="training: has no registry"):
        registry_for("training")


def test_validate_takes_only_a_run_config() -> None:
    with pytest.raises(ValueError, match="validate\\(\\) takes a RunConfig"):
        validate(small())  # type: ignore[arg-type]


def test_a_missing_dataset_root_fails_but_download_or_the_files_pass(tmp_path) -> None:
    mnist = {"name": "mnist", "split": "standard", "batch_size": 40, "samples_per_class": 4}
    validate(RunConfig.from_dict(small(data={**mnist, "root": "/nonexistent", "download": True})))
    with pytest.raises(ValueError, match=r"^data.root: .*\(4 missing, download is off\)"):
        validate(RunConfig.from_dict(small(data={**mnist, "root": str(tmp_path)})))
    raw = tmp_path / "MNIST" / "raw"
    raw.mkdir(parents=True)
    for name in ("train-images", "train-labels", "t10k-images", "t10k-labels"):
        (raw / f"{name}-idx{3 if 'images' in name else 1}-ubyte").write_bytes(b"")
    validate(RunConfig.from_dict(small(data={**mnist, "root": str(tmp_path)})))


def test_components_name_their_fields_and_no_message_is_read_for_one(monkeypatch) -> None:
    """A component's ConfigError keeps its path; any other refusal is reported under the
    section that chose the component, even when its message starts like a path."""
    import sphere_engine.data
    import sphere_engine.models.build

    config = RunConfig.from_dict(small())

    def refuse(error: ValueError):
        def raising(*args: object, **kwargs: object) -> None:
            raise error

        return raising

    monkeypatch.setattr(sphere_engine.data, "dataset_info", refuse(ValueError("data.root: x")))
    with pytest.raises(ConfigError) as caught:
        validate(config)
    assert caught.value.paths == ("data",)
    assert str(caught.value) == "data: data.root: x"

    split = ConfigError("data.split", "not for this dataset")
    monkeypatch.setattr(sphere_engine.data, "dataset_info", refuse(split))
    with pytest.raises(ConfigError) as caught:
        validate(config)
    assert caught.value is split

    monkeypatch.undo()
    monkeypatch.setattr(
        sphere_engine.models.build, "check_backbone", refuse(ValueError("data.image_size: y"))
    )
    with pytest.raises(ConfigError) as caught:
        validate(config)
    assert caught.value.paths == ("model.name", "data.name")


def test_a_missing_dataset_folder_is_a_config_error_from_the_dataset_itself() -> None:
    from sphere_engine.data import dataset_info

    with pytest.raises(ConfigError) as caught:
        dataset_info("image_folder", root="/no/such/folder", split="class_disjoint")
    assert caught.value.paths == ("data.root",)
