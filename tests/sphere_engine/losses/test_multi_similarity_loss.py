import math

import pytest
import torch

from sphere_engine.losses import MultiSimilarityLoss

# Class 3 is a tight pair (cos 0.05 rad − margin is above every negative): its positive
# is not mined, so its anchors contribute 0.
ANGLES = [0.0, 0.4, 1.0, 0.5, 2.5, -1.5, 1.2, 3.0, 3.05]
LABELS = [0, 0, 0, 1, 1, 2, 2, 3, 3]


def reference(c, alpha, beta, thresh, margin, mine=True):
    n = len(LABELS)
    total = 0.0
    for i in range(n):
        pos = [c[i][j] for j in range(n) if j != i and LABELS[j] == LABELS[i]]
        neg = [c[i][k] for k in range(n) if LABELS[k] != LABELS[i]]
        if mine:
            kept_neg = [s for s in neg if s + margin > min(pos)]
            kept_pos = [s for s in pos if s - margin < max(neg)]
        else:
            kept_neg, kept_pos = neg, pos
        if not kept_pos or not kept_neg:
            continue  # the anchor contributes 0 but still counts in N
        total += math.log1p(sum(math.exp(-alpha * (s - thresh)) for s in kept_pos)) / alpha
        total += math.log1p(sum(math.exp(beta * (s - thresh)) for s in kept_neg)) / beta
    return total / n


def test_matches_hand_computation(circle, cosines):
    c = cosines(ANGLES)
    expected = reference(c, 2.0, 40.0, 0.5, 0.1)
    # The mining matters on this batch: without it the value differs.
    assert expected != pytest.approx(reference(c, 2.0, 40.0, 0.5, 0.1, mine=False), rel=1e-3)
    radii = [1.0, 2.0, 0.3, 1.0, 4.0, 1.0, 2.0, 0.1, 7.0]
    value = MultiSimilarityLoss()(circle(ANGLES, radii), torch.tensor(LABELS))
    assert value.item() == pytest.approx(expected, rel=1e-9)


def test_two_classes_closed_form(circle):
    # Class 0 at 0 and 0.2, class 1 at 1.0 and 1.1.
    value = MultiSimilarityLoss(alpha=2.0, beta=10.0, thresh=0.5, margin=1.0)(
        circle([0.0, 0.2, 1.0, 1.1]), torch.tensor([0, 0, 1, 1])
    )
    # With margin 1 every pair is kept; per anchor: positive cos, two negative cosines.
    rows = [
        (math.cos(0.2), [math.cos(1.0), math.cos(1.1)]),
        (math.cos(0.2), [math.cos(0.8), math.cos(0.9)]),
        (math.cos(0.1), [math.cos(1.0), math.cos(0.8)]),
        (math.cos(0.1), [math.cos(1.1), math.cos(0.9)]),
    ]
    total = 0.0
    for s_pos, s_negs in rows:
        total += math.log1p(math.exp(-2.0 * (s_pos - 0.5))) / 2.0
        total += math.log1p(sum(math.exp(10.0 * (s - 0.5)) for s in s_negs)) / 10.0
    assert value.item() == pytest.approx(total / 4, rel=1e-9)


@pytest.mark.parametrize("option", ["alpha", "beta"])
def test_rejects_non_positive_weights(option):
    with pytest.raises(ValueError, match=option):
        MultiSimilarityLoss(**{option: 0.0})
