"""The registries: traits per component, one creation path, one option-check format."""

from __future__ import annotations

import dataclasses

import pytest

from sphere_engine.config.option_checks import OptionError, check_choice, check_option
from sphere_engine.data import DATASETS
from sphere_engine.heads import HEADS
from sphere_engine.losses import LOSSES
from sphere_engine.models import MODELS
from sphere_engine.registry import ComponentTraits, Registry
from sphere_engine.regularizers import REGULARIZERS

ALL = {
    "dataset": DATASETS,
    "model": MODELS,
    "loss": LOSSES,
    "head": HEADS,
    "regularizer": REGULARIZERS,
}
FIXED_HEADS = {"simplex", "orthoplex", "cube", "hadamard"}


def test_traits_are_frozen() -> None:
    traits = ComponentTraits(needs_positives=True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        traits.needs_positives = False  # type: ignore[misc]


@pytest.mark.parametrize("name", LOSSES.names())
def test_loss_traits(name: str) -> None:
    traits = LOSSES.traits(name)
    # A two-view loss (NT-Xent) makes its positives; every other pair loss mines them.
    assert traits.needs_positives == (not traits.requires_views)
    if name == "ntxent":
        assert traits.requires_views
    if name in {"triplet", "supcon", "contrastive"}:
        assert traits.needs_positives
    assert not traits.is_fixed and not traits.needs_num_classes


@pytest.mark.parametrize("name", HEADS.names())
def test_head_traits(name: str) -> None:
    traits = HEADS.traits(name)
    assert traits.is_fixed == (name in FIXED_HEADS)
    assert traits.needs_num_classes and traits.needs_embedding_dim
    assert not traits.needs_positives and not traits.requires_views


@pytest.mark.parametrize("name", REGULARIZERS.names())
def test_regularizer_traits(name: str) -> None:
    traits = REGULARIZERS.traits(name)
    assert traits.needs_num_classes == (name == "center")
    assert not traits.needs_positives and not traits.is_fixed


@pytest.mark.parametrize("name", MODELS.names())
def test_model_traits(name: str) -> None:
    assert MODELS.traits(name) == ComponentTraits(needs_embedding_dim=True)


@pytest.mark.parametrize("name", DATASETS.names())
def test_dataset_traits(name: str) -> None:
    assert DATASETS.traits(name) == ComponentTraits()


def test_traits_of_an_unknown_name_list_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown loss 'nope'; known: .*triplet"):
        LOSSES.traits("nope")


def test_every_registry_has_the_same_shape() -> None:
    fields = {kind: registry.options_field for kind, registry in ALL.items()}
    assert fields == {
        "dataset": "data.options",
        "model": "model.options",
        "loss": "objective.options",
        "head": "objective.options",
        "regularizer": "regularizer.options",
    }


def test_registering_bad_traits_fails() -> None:
    registry: Registry[object] = Registry("thing", "thing.options")

    with pytest.raises(TypeError, match="traits must be a ComponentTraits"):

        @registry.register("odd")
        class Odd:
            traits = ("is_fixed", True)


def test_create_reports_option_errors_under_the_options_field() -> None:
    registry: Registry[object] = Registry("thing", "thing.options", fixed_args=("size",))

    @registry.register("box")
    class Box:
        def __init__(self, size: int, margin: float = 0.0) -> None:
            check_option("size", size, low=1, integer=True)
            check_option("margin", margin, low=0)

    with pytest.raises(
        ValueError, match=r"^thing\.options\.margin: -1 is out of range; must be >= 0$"
    ):
        registry.create("box", 3, margin=-1)
    # A fixed argument is not a user option: no options prefix.
    with pytest.raises(ValueError, match=r"^size: 0 is out of range; must be an integer >= 1$"):
        registry.create("box", 0)


@pytest.mark.parametrize(
    ("kwargs", "value", "rule"),
    [
        ({"low": 0}, -1, ">= 0"),
        ({"low": 0, "low_open": True}, 0, "> 0"),
        ({"high": 1.5}, 2.0, "<= 1.5"),
        ({"low": 0, "high": 1, "low_open": True}, 0, "in (0, 1]"),
        ({"low": 0.0, "high": 3.141592653589793, "high_open": True}, 4.0, "in [0, π)"),
        ({"low": 1, "integer": True}, 2.5, "an integer >= 1"),
        ({"low": 0}, float("inf"), ">= 0"),
        ({"low": 0}, True, ">= 0"),
    ],
)
def test_option_check_message_format(kwargs: dict, value: object, rule: str) -> None:
    with pytest.raises(OptionError) as caught:
        check_option("margin", value, **kwargs)
    assert str(caught.value) == f"margin: {value!r} is out of range; must be {rule}"
    assert str(caught.value.under("objective.options")).startswith("objective.options.margin: ")
    assert isinstance(caught.value, ValueError)


def test_option_check_returns_the_value() -> None:
    assert check_option("scale", 2, low=0) == 2.0 and isinstance(check_option("s", 2, low=0), float)
    assert check_option("m", 4, low=1, integer=True) == 4
    assert check_choice("activation", "relu", ("relu", "gelu")) == "relu"
    with pytest.raises(
        OptionError, match=r"^activation: 'swish' is out of range; must be one of 'relu', 'gelu'$"
    ):
        check_choice("activation", "swish", ("relu", "gelu"))


@pytest.mark.parametrize(
    ("registry", "name", "args", "options", "path"),
    [
        (LOSSES, "triplet", (), {"margin": -1.0}, "objective.options.margin"),
        (HEADS, "arcface", (4, 3), {"margin": 4.0}, "objective.options.margin"),
        (HEADS, "simplex", (4, 3), {"margin": "wide"}, "objective.options.margin"),
        (REGULARIZERS, "sec", (4, 3), {"momentum": 2.0}, "regularizer.options.momentum"),
        (MODELS, "mlp", ((4,), 2), {"activation": "swish"}, "model.options.activation"),
        (DATASETS, "synthetic", (), {"noise": -1.0}, "data.options.noise"),
    ],
)
def test_every_kind_names_the_full_field_path(registry, name, args, options, path) -> None:
    with pytest.raises(OptionError, match=rf"^{path}: .* is out of range; must be "):
        registry.create(name, *args, **options)
