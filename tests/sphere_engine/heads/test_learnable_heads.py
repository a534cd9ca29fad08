"""Each learnable head against logits computed by hand on 2-D embeddings built from angles.

Feature f at 30° with norm 2; class 0 weight at 0°, class 1 weight at 90° (so
θ_0 = 30°, θ_1 = 60°). Weight norms differ from 1 to check that they are normalised.
"""

import math

import pytest
import torch

from sphere_engine.heads import HEADS

COS30, COS60 = math.cos(math.radians(30)), math.cos(math.radians(60))


def at(degrees: float, norm: float = 1.0) -> list[float]:
    return [norm * math.cos(math.radians(degrees)), norm * math.sin(math.radians(degrees))]


def feature(degrees: float = 30.0, norm: float = 2.0) -> torch.Tensor:
    return torch.tensor([at(degrees, norm)], dtype=torch.float64)


def build(name: str, **options) -> torch.nn.Module:
    head = HEADS.create(name, 2, 2, **options).double()
    if name != "linear":
        with torch.no_grad():
            head.weight.copy_(torch.tensor([at(0, 3.0), at(90, 0.5)]))
    return head


def logits(head, x, label=None):
    labels = None if label is None else torch.tensor([label])
    return head(x, labels)[0].tolist()


def test_linear_uses_raw_features_and_bias():
    head = HEADS.create("linear", 2, 2).double()
    with torch.no_grad():
        head.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 2.0]]))
        head.bias.copy_(torch.tensor([0.5, -1.0]))
    expected = [2 * COS30 + 0.5, 2 * 2 * 0.5 - 1.0]
    assert logits(head, feature()) == pytest.approx(expected)
    assert logits(head, feature(), label=0) == pytest.approx(expected)
    assert head.bias.requires_grad


def test_normface_is_scale_times_cosine():
    head = build("normface", scale=16.0)
    assert logits(head, feature()) == pytest.approx([16 * COS30, 16 * COS60])
    assert logits(head, feature(), label=1) == pytest.approx([16 * COS30, 16 * COS60])


def test_cosface_subtracts_margin_from_target_cosine():
    head = build("cosface", scale=64.0, margin=0.35)
    assert logits(head, feature(), label=0) == pytest.approx([64 * (COS30 - 0.35), 64 * COS60])
    assert logits(head, feature(), label=1) == pytest.approx([64 * COS30, 64 * (COS60 - 0.35)])
    assert logits(head, feature()) == pytest.approx([64 * COS30, 64 * COS60])


def test_arcface_adds_angular_margin_in_radians():
    head = build("arcface", scale=64.0, margin=0.5)
    target = 64 * math.cos(math.radians(30) + 0.5)
    assert logits(head, feature(), label=0) == pytest.approx([target, 64 * COS60])
    assert logits(head, feature()) == pytest.approx([64 * COS30, 64 * COS60])


def test_arcface_falls_back_past_pi():
    # θ_0 = 170° and m = 0.5 rad: θ + m > π, so the target is cos θ − m·sin m.
    head = build("arcface", scale=64.0, margin=0.5)
    x = feature(170.0)
    cos_target = math.cos(math.radians(170))
    cos_other = math.cos(math.radians(80))
    expected = [64 * (cos_target - 0.5 * math.sin(0.5)), 64 * cos_other]
    assert logits(head, x, label=0) == pytest.approx(expected)
    # The plain formula would have given a larger (less penalised) logit here.
    assert 64 * math.cos(math.radians(170) + 0.5) > expected[0]


def test_sphereface_original_scales_by_feature_norm():
    head = build("sphereface", margin=4)
    # θ = 30°: k = 0, ψ = cos 120° = −0.5.  θ = 60°: k = 1, ψ = −cos 240° − 2 = −1.5.
    assert logits(head, feature(), label=0) == pytest.approx([2 * -0.5, 2 * COS60])
    assert logits(head, feature(), label=1) == pytest.approx([2 * COS30, 2 * -1.5])
    assert logits(head, feature()) == pytest.approx([2 * COS30, 2 * COS60])


def test_sphereface_fixed_scale_and_blend():
    head = build("sphereface", margin=4, scale=10.0)
    assert logits(head, feature(), label=1) == pytest.approx([10 * COS30, 10 * -1.5])
    blended = build("sphereface", margin=4, softmax_blend=1.0)
    # (λ cos θ + ψ) / (1 + λ) with λ = 1: (0.5 − 1.5) / 2 = −0.5, times ||f|| = 2.
    assert logits(blended, feature(), label=1) == pytest.approx([2 * COS30, -1.0])


def test_sphereface_margin_one_is_plain_cosine():
    head = build("sphereface", margin=1)
    assert logits(head, feature(), label=0) == pytest.approx([2 * COS30, 2 * COS60])


@pytest.mark.parametrize("name", ["normface", "cosface", "arcface", "sphereface"])
def test_normalised_heads_learn_their_weights(name):
    head = HEADS.create(name, 4, 3)
    assert not head.is_fixed
    assert [n for n, p in head.named_parameters() if p.requires_grad] == ["weight"]
    x = torch.randn(5, 4)
    head(x, torch.tensor([0, 1, 2, 0, 1])).logsumexp(dim=1).sum().backward()
    assert head.weight.grad is not None and torch.isfinite(head.weight.grad).all()
    assert head.weight.grad.abs().sum() > 0
