"""app/presets.py: every preset is a valid config and reproduces its SCIENCE.md experiment."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.presets import PRESETS
from sphere_engine.config import RunConfig
from sphere_engine.config.validation import validate


@pytest.mark.parametrize("key", sorted(PRESETS))
def test_every_preset_run_validates(key):
    preset = PRESETS[key]
    assert len(preset.configs) == len(preset.names) >= 1
    assert len(set(preset.names)) == len(preset.names)
    for name, config in preset.runs():
        run_config = RunConfig.from_dict(config)
        root = run_config.data.root
        if root and not Path(root).exists():
            # A preset over local files (MNIST under ../shared/data on the development
            # machines) is refused exactly for its missing root where the files are absent.
            with pytest.raises(ValueError, match=r"^data\.root: "):
                validate(run_config)
        else:
            validate(run_config)  # raises ValueError naming the field if not
        assert name


def _settings(key, *paths):
    result = []
    for config in PRESETS[key].configs:
        full = RunConfig.from_dict(config).to_dict()
        result.append(tuple(_get(full, p) for p in paths))
    return result


def _get(config, dotted):
    for part in dotted.split("."):
        config = config[part]
    return config


def test_sec_ablation_has_baseline_sec_and_l2_towards_zero():
    settings = _settings("sec_ablation", "regularizer.name", "regularizer.weight")
    assert settings == [
        ("none", 0.0),
        ("sec", 0.5),
        ("l2", 0.1),
        ("l2", 0.01),
        ("l2", 0.005),
        ("l2", 0.001),
    ]


def test_polytope_heads_use_lenetpp_and_the_automatic_margin():
    settings = _settings(
        "polytope_heads", "model.name", "objective.name", "objective.options", "model.embedding_dim"
    )
    assert settings[:3] == [
        ("lenetpp", "simplex", {"margin": "auto"}, 9),
        ("lenetpp", "orthoplex", {"margin": "auto"}, 5),
        ("lenetpp", "cube", {"margin": "auto"}, 4),
    ]
    assert settings[3][1] == "linear"


def test_bn_and_weight_norm_with_and_without_sec():
    settings = set(
        _settings("bn_wn_sec", "model.embedding_bn", "model.weight_norm", "regularizer.name")
    )
    for bn, wn in ((True, False), (False, True), (False, False)):
        assert {(bn, wn, "none"), (bn, wn, "sec")} <= settings


def test_sgd_and_adam_are_otherwise_the_same_run():
    configs = [RunConfig.from_dict(c).to_dict() for c in PRESETS["sgd_vs_adam"].configs]
    assert [(c["optimizer"]["name"], c["regularizer"]["name"]) for c in configs] == [
        ("sgd", "none"),
        ("sgd", "sec"),
        ("adam", "none"),
        ("adam", "sec"),
    ]
    for config in configs:
        assert config["data"] == configs[0]["data"] and config["model"] == configs[0]["model"]


def test_runs_returns_copies():
    preset = PRESETS["smoke"]
    _, config = preset.runs()[0]
    config["training"]["steps"] = 1
    assert preset.configs[0]["training"]["steps"] == 60
