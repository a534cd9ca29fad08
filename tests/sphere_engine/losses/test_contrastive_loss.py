import math

import pytest
import torch

from sphere_engine.losses import ContrastiveLoss

ANGLES = [0.0, 0.3, 1.2, 2.0]
LABELS = [0, 0, 1, 1]


def test_matches_hand_computation(circle, cosines):
    c = cosines(ANGLES)
    pos_losses, neg_losses = [], []
    for i in range(4):
        for j in range(4):
            if i == j:
                continue
            if LABELS[i] == LABELS[j]:
                pos_losses.append(max(0.0, 0.9 - c[i][j]))
            else:
                neg_losses.append(max(0.0, c[i][j] - 0.2))
    pos_active = [v for v in pos_losses if v > 0]
    neg_active = [v for v in neg_losses if v > 0]
    # cos 0.3 = 0.955 is above 0.9, so only the class-1 pair (cos 0.8) is active.
    assert len(pos_active) == 2 and len(neg_active) == 4
    expected = sum(pos_active) / len(pos_active) + sum(neg_active) / len(neg_active)

    loss = ContrastiveLoss(pos_margin=0.9, neg_margin=0.2)
    value = loss(circle(ANGLES, [1.0, 2.0, 0.5, 3.0]), torch.tensor(LABELS))
    assert value.item() == pytest.approx(expected, rel=1e-9)
    # The same in closed form: active pairs are (2, 3), (0, 2) and (1, 2).
    closed_form = (0.9 - math.cos(0.8)) + ((math.cos(1.2) - 0.2) + (math.cos(0.9) - 0.2)) / 2
    assert value.item() == pytest.approx(closed_form, rel=1e-9)


def test_easy_batch_gives_zero_with_gradient(circle):
    embeddings = circle([0.0, 0.0, 3.0, 3.0]).requires_grad_()
    value = ContrastiveLoss(pos_margin=0.9, neg_margin=0.2)(embeddings, torch.tensor(LABELS))
    value.backward()
    assert value.item() == 0.0
    assert torch.equal(embeddings.grad, torch.zeros_like(embeddings))


def test_rejects_margin_out_of_range():
    with pytest.raises(ValueError, match="neg_margin"):
        ContrastiveLoss(neg_margin=1.5)
