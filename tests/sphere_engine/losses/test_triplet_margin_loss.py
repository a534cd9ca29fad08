import math

import pytest
import torch

from sphere_engine.losses import TripletMarginLoss

ANGLES = [0.0, 0.4, 1.0, 0.5, 2.5, -1.5]
LABELS = [0, 0, 0, 1, 1, 2]


def test_matches_hand_computation(circle, cosines):
    c = cosines(ANGLES)
    margin = 0.1
    losses = []
    for a in range(6):
        for p in range(6):
            if p == a or LABELS[p] != LABELS[a]:
                continue
            for n in range(6):
                if LABELS[n] != LABELS[a]:
                    losses.append(max(0.0, c[a][n] - c[a][p] + margin))
    active = [v for v in losses if v > 0]
    assert 0 < len(active) < len(losses)  # the batch has both easy and active triplets
    expected = sum(active) / len(active)

    radii = [1.0, 3.0, 0.2, 2.0, 1.0, 5.0]
    value = TripletMarginLoss(margin=margin)(circle(ANGLES, radii), torch.tensor(LABELS))
    assert value.item() == pytest.approx(expected, rel=1e-9)


def test_single_triplet_closed_form(circle):
    # anchor 0, positive at 0.5 rad, negative at 0.3 rad: cos 0.3 − cos 0.5 + 0.2.
    value = TripletMarginLoss(margin=0.2)(circle([0.0, 0.5, 0.3]), torch.tensor([0, 0, 1]))
    # Triplets: (0,1,2) active as above; (1,0,2): cos 0.2 − cos 0.5 + 0.2, also active.
    expected = ((math.cos(0.3) - math.cos(0.5) + 0.2) + (math.cos(0.2) - math.cos(0.5) + 0.2)) / 2
    assert value.item() == pytest.approx(expected, rel=1e-9)


def test_no_positive_pairs_gives_zero(circle):
    value = TripletMarginLoss()(circle([0.0, 1.0, 2.0]), torch.tensor([0, 1, 2]))
    assert value.item() == 0.0
