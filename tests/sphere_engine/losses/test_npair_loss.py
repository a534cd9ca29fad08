import math

import pytest
import torch

from sphere_engine.losses import NPairLoss
from sphere_engine.losses.npair_loss import consecutive_pairs

ANGLES = [0.0, 1.5, 0.3, 1.9, -0.4, 0.2, 3.0, 2.6]
LABELS = [0, 1, 0, 1, 0, 0, 2, 2]
# Consecutive same-class samples in batch order: class 0 → (0, 2), (4, 5);
# class 1 → (1, 3); class 2 → (6, 7).
PAIRS = [(0, 2), (1, 3), (4, 5), (6, 7)]


def test_pairs_are_consecutive_samples_of_a_class():
    anchors, positives = consecutive_pairs(torch.tensor(LABELS))
    assert sorted(zip(anchors.tolist(), positives.tolist(), strict=True)) == PAIRS


def test_odd_sample_and_singletons_are_left_out():
    anchors, positives = consecutive_pairs(torch.tensor([3, 1, 3, 1, 3, 2]))
    assert sorted(zip(anchors.tolist(), positives.tolist(), strict=True)) == [(0, 2), (1, 3)]


def test_matches_hand_computation(circle, cosines):
    c = cosines(ANGLES)
    scale = 2.0
    losses = []
    for i, (a, p) in enumerate(PAIRS):
        # Same-class positives of other pairs are not negatives: only j = i or other classes.
        columns = [j for j, (_, q) in enumerate(PAIRS) if j == i or LABELS[q] != LABELS[a]]
        denominator = sum(math.exp(scale * c[a][PAIRS[j][1]]) for j in columns)
        losses.append(-math.log(math.exp(scale * c[a][p]) / denominator))
    expected = sum(losses) / len(losses)
    radii = [1.0, 2.0, 3.0, 0.5, 1.0, 1.5, 2.5, 0.7]
    value = NPairLoss(scale=scale)(circle(ANGLES, radii), torch.tensor(LABELS))
    assert value.item() == pytest.approx(expected, rel=1e-9)


def test_two_pairs_closed_form(circle):
    # Pairs (0, 1) at angles 0, 0.2 and (2, 3) at 1, 1.5: softmax over two logits.
    value = NPairLoss(scale=25.0)(circle([0.0, 0.2, 1.0, 1.5]), torch.tensor([0, 0, 1, 1]))
    first = math.log1p(math.exp(25 * (math.cos(1.5) - math.cos(0.2))))
    second = math.log1p(math.exp(25 * (math.cos(0.8) - math.cos(0.5))))
    assert value.item() == pytest.approx((first + second) / 2, rel=1e-9)


def test_rejects_non_positive_scale():
    with pytest.raises(ValueError, match="scale"):
        NPairLoss(scale=0.0)
