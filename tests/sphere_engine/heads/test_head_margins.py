import math

import pytest
import torch

from sphere_engine.heads.margins import (
    additive_angular_margin,
    multiplicative_angular_margin,
    replace_target,
)


@pytest.mark.parametrize("m", [1, 2, 3, 4])
def test_psi_is_continuous_decreasing_and_ends_at_one_minus_two_m(m):
    theta = torch.linspace(0, math.pi, 2001, dtype=torch.float64)
    psi = multiplicative_angular_margin(torch.cos(theta), m)
    steps = psi.diff()
    assert (steps < 0).all()
    assert steps.abs().max() < 0.05  # no jumps at the piece boundaries kπ/m
    assert psi[0].item() == pytest.approx(1.0, abs=1e-4)
    assert psi[-1].item() == pytest.approx(1 - 2 * m, abs=1e-4)


def test_psi_at_piece_boundary():
    # θ = π/4 with m = 4: k = 1, ψ = −cos(π) − 2 = −1 (continuous with k = 0's cos π = −1).
    psi = multiplicative_angular_margin(torch.tensor([math.cos(math.pi / 4)]).double(), 4)
    assert psi.item() == pytest.approx(-1.0, abs=1e-5)


def test_arcface_target_is_decreasing_in_theta_across_fallback():
    theta = torch.linspace(0, math.pi, 2001, dtype=torch.float64)
    target = additive_angular_margin(torch.cos(theta), 0.5)
    assert (target.diff() < 0).all()


def test_arcface_zero_margin_is_identity():
    cos = torch.tensor([0.9, 0.1, -0.7], dtype=torch.float64)
    torch.testing.assert_close(additive_angular_margin(cos, 0.0), cos)


def test_arcface_gradient_is_finite_at_cosine_one():
    cos = torch.tensor([1.0, -1.0], requires_grad=True)
    additive_angular_margin(cos, 0.5).sum().backward()
    assert torch.isfinite(cos.grad).all()


def test_replace_target_only_touches_the_label_column():
    cosine = torch.zeros(2, 3)
    out = replace_target(cosine, torch.tensor([2, 0]), torch.tensor([5.0, 7.0]))
    assert out.tolist() == [[0.0, 0.0, 5.0], [7.0, 0.0, 0.0]]
    assert cosine.abs().sum() == 0
