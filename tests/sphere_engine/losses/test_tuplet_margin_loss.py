import math

import pytest
import torch

from sphere_engine.losses import TupletMarginLoss

ANGLES = [0.0, 0.4, 1.0, 0.5, 2.5, -1.5]
LABELS = [0, 0, 0, 1, 1, 2]


def reference(c, margin, scale, lambda_ipv, eps):
    n = len(LABELS)
    pos = [(a, p) for a in range(n) for p in range(n) if p != a and LABELS[p] == LABELS[a]]
    neg = [(a, k) for a in range(n) for k in range(n) if LABELS[k] != LABELS[a]]
    tuplet = []
    for a, p in pos:
        slackened = math.cos(math.acos(c[a][p]) - margin)
        negatives = [c[a][k] for k in range(n) if LABELS[k] != LABELS[a]]
        tuplet.append(math.log1p(sum(math.exp(scale * (s - slackened)) for s in negatives)))
    mean_pos = sum(c[a][p] for a, p in pos) / len(pos)
    mean_neg = sum(c[a][k] for a, k in neg) / len(neg)
    ipv_pos = [max(0.0, (1 - eps) * mean_pos - c[a][p]) ** 2 for a, p in pos]
    ipv_neg = [max(0.0, c[a][k] - (1 + eps) * mean_neg) ** 2 for a, k in neg]
    ipv = sum(ipv_pos) / len(ipv_pos) + sum(ipv_neg) / len(ipv_neg)
    return sum(tuplet) / len(tuplet) + lambda_ipv * ipv


def test_matches_hand_computation(circle, cosines):
    expected = reference(cosines(ANGLES), margin=0.1, scale=4.0, lambda_ipv=0.5, eps=0.1)
    loss = TupletMarginLoss(margin=0.1, scale=4.0, lambda_ipv=0.5, eps=0.1)
    value = loss(circle(ANGLES, [1.0, 2.0, 3.0, 0.5, 1.0, 2.0]), torch.tensor(LABELS))
    assert value.item() == pytest.approx(expected, rel=1e-7)


def test_one_tuplet_closed_form_without_ipv(circle):
    # Anchor 0, positive at 0.3 rad, negative at 1 rad; margin 0.1 rad slackens 0.3 → 0.2.
    loss = TupletMarginLoss(margin=0.1, scale=8.0, lambda_ipv=0.0)
    value = loss(circle([0.0, 0.3, 1.0]), torch.tensor([0, 0, 1]))
    first = math.log1p(math.exp(8 * (math.cos(1.0) - math.cos(0.2))))
    second = math.log1p(math.exp(8 * (math.cos(0.7) - math.cos(0.2))))  # anchor 0.3
    assert value.item() == pytest.approx((first + second) / 2, rel=1e-7)


def test_coincident_points_have_finite_gradients(circle):
    embeddings = circle([0.0, 0.0, 1.0, 1.0]).requires_grad_()
    TupletMarginLoss()(embeddings, torch.tensor([0, 0, 1, 1])).backward()
    assert torch.isfinite(embeddings.grad).all()


def test_rejects_negative_lambda():
    with pytest.raises(ValueError, match="lambda_ipv"):
        TupletMarginLoss(lambda_ipv=-1.0)


def _points() -> torch.Tensor:
    # float64, well away from coincident points and from the hinges' kinks
    return torch.randn(8, 3, generator=torch.Generator().manual_seed(3), dtype=torch.float64)


POINT_LABELS = torch.tensor([0, 0, 0, 1, 1, 1, 2, 2])


def test_gradient_flows_through_the_batch_means():
    # Yu & Tao / pytorch-metric-learning: no stop-gradient on E[cos θ]. The autograd
    # gradient must match finite differences of the loss, which see the means move.
    loss = TupletMarginLoss(margin=0.1, scale=4.0, lambda_ipv=5.0, eps=0.05)
    embeddings = _points().requires_grad_()
    assert torch.autograd.gradcheck(lambda e: loss(e, POINT_LABELS), (embeddings,), eps=1e-6)


def test_detaching_the_means_is_an_explicit_variant_that_changes_the_gradient():
    embeddings = _points()
    gradients = []
    for detach in (False, True):
        loss = TupletMarginLoss(scale=4.0, lambda_ipv=5.0, eps=0.05, detach_means=detach)
        points = embeddings.clone().requires_grad_()
        loss(points, POINT_LABELS).backward()
        gradients.append(points.grad)
    # same value, different gradient: detaching is not a no-op here (unlike SEC's μ)
    assert not torch.allclose(gradients[0], gradients[1], atol=1e-8)
    assert TupletMarginLoss().detach_means is False


def test_rejects_a_non_boolean_detach_means():
    with pytest.raises(ValueError, match="detach_means"):
        TupletMarginLoss(detach_means="yes")
