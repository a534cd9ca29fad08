import math

import pytest
import torch

from sphere_engine.regularizers import SphericalEmbeddingConstraint

LABELS = torch.tensor([0, 0, 1, 1])


def on_circle(angles, radii):
    return torch.tensor(
        [[r * math.cos(a), r * math.sin(a)] for a, r in zip(angles, radii, strict=True)],
        dtype=torch.float64,
    )


def test_value_by_hand():
    # Norms 1, 2, 3, 6: μ = 3, L = (4 + 1 + 0 + 9) / 4.
    sec = SphericalEmbeddingConstraint(2, 2)
    value = sec(on_circle([0.0, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 6.0]), LABELS)
    assert value.item() == pytest.approx(3.5)
    assert sec.diagnostics()["sec/mu_batch"].item() == pytest.approx(3.0)
    assert sec.diagnostics()["sec/mu_ema"].item() == pytest.approx(3.0)


def test_zero_when_all_norms_are_equal():
    value = SphericalEmbeddingConstraint(2, 2)(on_circle([0.0, 1.0, 2.5, 4.0], [2.0] * 4), LABELS)
    assert value.item() == pytest.approx(0.0, abs=1e-12)


def test_radial_gradients_sum_to_zero_with_the_batch_mean():
    embeddings = on_circle([0.0, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 6.0]).requires_grad_()
    SphericalEmbeddingConstraint(2, 2)(embeddings, LABELS).backward()
    unit = embeddings.detach() / embeddings.detach().norm(dim=1, keepdim=True)
    radial = (embeddings.grad * unit).sum(dim=1)  # ∂L/∂||f_i|| = 2 (||f_i|| − μ) / N
    assert radial.tolist() == pytest.approx([-1.0, -0.5, 0.0, 1.5])
    assert radial.sum().item() == pytest.approx(0.0, abs=1e-12)


def test_gradient_matches_finite_differences():
    embeddings = torch.randn(5, 3, dtype=torch.float64, requires_grad=True)
    sec = SphericalEmbeddingConstraint(3, 2)
    labels = torch.tensor([0, 1, 0, 1, 0])
    assert torch.autograd.gradcheck(lambda f: sec(f, labels), (embeddings,))


def test_ema_target_follows_the_documented_update():
    sec = SphericalEmbeddingConstraint(2, 2, momentum=0.25)
    sec(on_circle([0.0, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 6.0]), LABELS)  # μ_1 = 3
    assert sec.mu_ema.item() == pytest.approx(3.0)
    value = sec(on_circle([0.0, 1.0, 2.0, 3.0], [0.5, 1.5, 1.0, 1.0]), LABELS)
    # μ_2 = 0.25 · 1 + 0.75 · 3 = 2.5; L = mean((r − 2.5)²).
    assert sec.diagnostics()["sec/mu_batch"].item() == pytest.approx(1.0)
    assert sec.diagnostics()["sec/mu_ema"].item() == pytest.approx(2.5)
    assert value.item() == pytest.approx((4.0 + 1.0 + 2.25 + 2.25) / 4)


def test_eval_mode_uses_the_stored_target_without_updating():
    sec = SphericalEmbeddingConstraint(2, 2, momentum=0.5)
    sec(on_circle([0.0, 1.0, 2.0, 3.0], [2.0] * 4), LABELS)
    sec.eval()
    value = sec(on_circle([0.0, 1.0, 2.0, 3.0], [1.0] * 4), LABELS)
    assert value.item() == pytest.approx(1.0)  # (1 − 2)² with μ kept at 2
    assert sec.mu_ema.item() == pytest.approx(2.0)
    assert "mu_ema" in sec.state_dict()


@pytest.mark.parametrize("momentum", [0.0, -0.1, 1.5])
def test_rejects_momentum_outside_range(momentum):
    with pytest.raises(ValueError, match=r"momentum: .* must be in \(0, 1\]"):
        SphericalEmbeddingConstraint(2, 2, momentum=momentum)


def test_eval_mode_before_any_update_uses_the_batch_mean():
    sec = SphericalEmbeddingConstraint(2, 2, momentum=0.5).eval()
    value = sec(on_circle([0.0, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 6.0]), LABELS)
    assert value.item() == pytest.approx(3.5)


def test_ema_continues_after_loading_a_checkpoint():
    first = SphericalEmbeddingConstraint(2, 2, momentum=0.5)
    first(on_circle([0.0, 1.0, 2.0, 3.0], [4.0] * 4), LABELS)  # μ = 4
    resumed = SphericalEmbeddingConstraint(2, 2, momentum=0.5)
    resumed.load_state_dict(first.state_dict())
    resumed(on_circle([0.0, 1.0, 2.0, 3.0], [2.0] * 4), LABELS)
    assert resumed.diagnostics()["sec/mu_ema"].item() == pytest.approx(3.0)  # ½·2 + ½·4
