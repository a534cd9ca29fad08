import pytest
import torch

from sphere_engine.heads import HEADS

LEARNABLE = ["linear", "normface", "sphereface", "cosface", "arcface"]
FIXED = ["simplex", "orthoplex", "cube", "hadamard"]


def test_all_heads_are_registered():
    assert HEADS.names() == sorted(LEARNABLE + FIXED)


@pytest.mark.parametrize("name", LEARNABLE + FIXED)
def test_every_head_builds_gives_logits_and_has_help(name):
    head = HEADS.create(name, 8, 5)
    assert head.is_fixed == (name in FIXED)
    x, y = torch.randn(6, 8, requires_grad=True), torch.tensor([0, 1, 2, 3, 4, 0])
    assert head(x).shape == (6, 5)
    head(x, y).sum().backward()
    assert torch.isfinite(x.grad).all()
    for param in HEADS.params(name).values():
        assert param.help, f"{name}.{param.name} has no help text"


def test_unknown_head_lists_known_ones():
    with pytest.raises(ValueError, match=r"unknown head 'softmax'.*arcface.*simplex"):
        HEADS.create("softmax", 8, 5)


def test_unknown_option_lists_allowed():
    with pytest.raises(ValueError, match=r"unknown option 'margin'.*allowed: scale"):
        HEADS.create("normface", 8, 5, margin=0.1)


@pytest.mark.parametrize(
    ("name", "options", "field"),
    [
        ("normface", {"scale": 0.0}, "scale"),
        ("arcface", {"scale": -1.0}, "scale"),
        ("arcface", {"margin": -0.5}, "margin"),
        ("cosface", {"margin": -0.1}, "margin"),
        ("sphereface", {"margin": 0}, "margin"),
        ("sphereface", {"margin": 2.5}, "margin"),
        ("sphereface", {"scale": 0.0}, "scale"),
    ],
)
def test_bad_options_name_the_field(name, options, field):
    message = rf"^objective\.options\.{field}: .* is out of range; must be "
    with pytest.raises(ValueError, match=message):
        HEADS.create(name, 8, 5, **options)


@pytest.mark.parametrize(
    ("dim", "classes", "field"), [(0, 5, "embedding_dim"), (4, 0, "num_classes")]
)
def test_bad_sizes(dim, classes, field):
    with pytest.raises(ValueError, match=field):
        HEADS.create("linear", dim, classes)
