import pytest

from sphere_engine import losses
from sphere_engine.losses import LOSSES
from sphere_engine.losses.base_loss import BaseLoss

EXPECTED = {
    "batch_hard_triplet",
    "contrastive",
    "multi_similarity",
    "npair",
    "ntxent",
    "semihard_triplet",
    "supcon",
    "triplet",
    "tuplet_margin",
}


def test_lists_every_pair_loss():
    # A superset: a new loss needs no edit here (see docs/architecture.md, "Add a loss").
    assert set(LOSSES.names()) >= EXPECTED


def test_every_registered_loss_is_exported_from_the_package():
    exported = {getattr(losses, name) for name in losses.__all__}
    assert {LOSSES.get(name) for name in LOSSES.names()} <= exported


def test_unknown_name_lists_known_ones():
    with pytest.raises(ValueError, match=r"unknown loss 'arcface'.*contrastive.*triplet"):
        LOSSES.create("arcface")


def test_unknown_option_lists_allowed_ones():
    with pytest.raises(
        ValueError, match=r"objective\.options\.temp: unknown option.*allowed: temperature"
    ):
        LOSSES.create("supcon", temp=0.2)


@pytest.mark.parametrize(
    ("name", "options", "field"),
    [
        ("supcon", {"temperature": -0.1}, "temperature"),
        ("ntxent", {"temperature": 0.0}, "temperature"),
        ("triplet", {"margin": -0.5}, "margin"),
        ("tuplet_margin", {"scale": 0.0}, "scale"),
        ("multi_similarity", {"thresh": 2.0}, "thresh"),
    ],
)
def test_bad_values_raise_naming_the_option(name, options, field):
    message = rf"^objective\.options\.{field}: .* is out of range; must be "
    with pytest.raises(ValueError, match=message):
        LOSSES.create(name, **options)


def test_create_passes_options_and_regulariser_weight():
    loss = LOSSES.create("triplet", margin=0.3, embedding_reg_weight=0.5)
    assert loss.margin == 0.3
    assert loss.embedding_reg_weight == 0.5


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_option_has_help_and_fixed_args_are_hidden(name):
    params = LOSSES.params(name)
    assert params, f"{name} has no options"
    assert "embedding_regularizer" not in params and "embedding_reg_weight" not in params
    for option, param in params.items():
        assert param.help, f"{name}.{option} has no help text"
        assert not param.required
    assert issubclass(LOSSES.get(name), BaseLoss)
