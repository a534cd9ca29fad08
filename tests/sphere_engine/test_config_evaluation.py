"""The `evaluation` and `robustness` config sections and `diagnostics.recall_ks`."""

from __future__ import annotations

import pytest

from sphere_engine.config import RunConfig, field_help
from sphere_engine.validation import validate


def test_defaults_and_round_trip() -> None:
    config = RunConfig.from_dict({})
    assert config.diagnostics.recall_ks == [1, 2, 4, 8]
    assert config.evaluation.retrieval_protocol == "leave_one_out"
    assert config.evaluation.verification is True
    assert config.evaluation.linear_probe == "auto"
    assert config.evaluation.knn_backend == "auto"
    chosen = RunConfig.from_dict({"evaluation": {"knn_backend": "torch-cuda"}})
    assert chosen.evaluation.knn_backend == "torch-cuda"
    assert config.robustness.enabled is False
    assert RunConfig.from_json(config.to_json()) == config


def test_every_new_field_has_help() -> None:
    for section in ("evaluation", "robustness"):
        for name in RunConfig.from_dict({}).to_dict()[section]:
            assert field_help(section, name)["help"]
    assert field_help("diagnostics", "recall_ks")["help"]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"diagnostics": {"recall_ks": []}}, "diagnostics.recall_ks: [] must list 1 to 16"),
        ({"diagnostics": {"recall_ks": [1, 0]}}, "diagnostics.recall_ks: 0 is out of range"),
        ({"diagnostics": {"recall_ks": [1, 1]}}, "diagnostics.recall_ks: [1, 1] repeats"),
        ({"diagnostics": {"recall_ks": [1.5]}}, "diagnostics.recall_ks[0]: 1.5 is not a valid"),
        ({"evaluation": {"far_targets": [0.0]}}, "evaluation.far_targets: 0.0 is out of range"),
        (
            {"evaluation": {"far_targets": [float("nan")]}},
            "evaluation.far_targets[0]: nan is not a finite number",
        ),
        ({"evaluation": {"query_fraction": 1.0}}, "evaluation.query_fraction: 1.0 is above"),
        ({"evaluation": {"retrieval_protocol": "x"}}, "evaluation.retrieval_protocol: 'x'"),
        ({"evaluation": {"knn_backend": "cuda"}}, "evaluation.knn_backend: 'cuda'"),
        ({"evaluation": {"max_impostor_pairs": 0}}, "evaluation.max_impostor_pairs: 0 is below"),
        ({"evaluation": {"linear_probe": "on"}}, "evaluation.linear_probe: 'on' needs"),
        ({"robustness": {"attacks": ["cw"]}}, "robustness.attacks: 'cw' is out of range"),
        ({"robustness": {"attacks": []}}, "robustness.attacks: [] must list"),
        ({"robustness": {"epsilons": [1.5]}}, "robustness.epsilons: 1.5 is out of range"),
        (
            {"robustness": {"epsilons": [float("inf")]}},
            "robustness.epsilons[0]: inf is not a finite number",
        ),
        ({"robustness": {"steps": 0}}, "robustness.steps: 0 is below"),
        ({"robustness": {"bogus": 1}}, "robustness.bogus: unknown setting"),
    ],
)
def test_bad_values_name_the_field(data: dict, message: str) -> None:
    with pytest.raises(ValueError) as error:
        RunConfig.from_dict(data)
    assert str(error.value).startswith(message)


def test_linear_probe_on_is_allowed_on_the_standard_split() -> None:
    config = RunConfig.from_dict(
        {"data": {"split": "standard"}, "evaluation": {"linear_probe": "on"}}
    )
    assert config.evaluation.linear_probe == "on"


def test_validate_refuses_robustness_on_a_dataset_without_pixel_range() -> None:
    config = RunConfig.from_dict(
        {"data": {"name": "synthetic", "samples_per_class": 4, "batch_size": 16},
         "robustness": {"enabled": True}}
    )  # fmt: skip
    with pytest.raises(ValueError, match=r"^robustness.enabled: dataset 'synthetic'"):
        validate(config)
    validate(RunConfig.from_dict({"robustness": {"enabled": True}}))  # digits has one
