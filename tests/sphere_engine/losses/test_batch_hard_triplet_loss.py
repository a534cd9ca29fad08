import math

import pytest
import torch

from sphere_engine.losses import BatchHardTripletLoss

ANGLES = [0.0, 0.4, 1.0, 0.5, 2.5, -1.5]
LABELS = [0, 0, 0, 1, 1, 2]


def test_matches_hand_computation(circle, cosines):
    c = cosines(ANGLES)
    losses = []
    for a in range(6):
        positives = [c[a][p] for p in range(6) if p != a and LABELS[p] == LABELS[a]]
        negatives = [c[a][n] for n in range(6) if LABELS[n] != LABELS[a]]
        if positives and negatives:  # the class-2 singleton has no positive
            losses.append(max(0.0, max(negatives) - min(positives) + 0.2))
    assert len(losses) == 5
    expected = sum(losses) / len(losses)
    value = BatchHardTripletLoss(margin=0.2)(circle(ANGLES, [2.0] * 6), torch.tensor(LABELS))
    assert value.item() == pytest.approx(expected, rel=1e-9)


def test_first_anchor_closed_form(circle):
    # One anchor-positive per class: anchor 0's hardest positive is at 1.0 rad, its
    # hardest negative at 0.5 rad; the other anchors mirror it.
    value = BatchHardTripletLoss(margin=0.0)(
        circle([0.0, 1.0, 0.5, 3.0]), torch.tensor([0, 0, 1, 1])
    )
    a0 = max(0.0, math.cos(0.5) - math.cos(1.0))
    a1 = max(0.0, math.cos(0.5) - math.cos(1.0))
    a2 = max(0.0, math.cos(0.5) - math.cos(2.5))
    a3 = max(0.0, math.cos(2.0) - math.cos(2.5))
    assert value.item() == pytest.approx((a0 + a1 + a2 + a3) / 4, rel=1e-9)
