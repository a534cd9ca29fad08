import math

import pytest
import torch

from sphere_engine.losses import SemiHardTripletLoss

# Class 0 at 0 and 0.5 rad, class 1 at 0.6 and −2 rad. With margin 0.1:
#  (0 → 0.5): semi-hard negative 0.6 (cos 0.825 < cos 0.5), within the margin;
#  (0.5 → 0): no negative is within cos 0.5's band except 0.6, which is *more* similar
#             than the positive, so the semi-hard one is −2 (loss 0);
#  (0.6 → −2): both negatives are more similar than the positive: fallback to the
#             least similar negative (0, cos 0.6);
#  (−2 → 0.6): negatives at 0 and 0.5 are both more similar: fallback to the least
#             similar one, 0.5 (cos 2.5).
ANGLES = [0.0, 0.5, 0.6, -2.0]
LABELS = [0, 0, 1, 1]


def reference(c, margin):
    losses = []
    for a in range(4):
        for p in range(4):
            if p == a or LABELS[p] != LABELS[a]:
                continue
            negatives = [n for n in range(4) if LABELS[n] != LABELS[a]]
            semi = [n for n in negatives if c[a][n] < c[a][p]]
            if semi:
                chosen = max(semi, key=lambda n: c[a][n])
            else:
                chosen = min(negatives, key=lambda n: c[a][n])
            losses.append(max(0.0, c[a][chosen] - c[a][p] + margin))
    return sum(losses) / len(losses)


def test_matches_hand_computation(circle, cosines):
    expected = reference(cosines(ANGLES), 0.1)
    closed_form = (
        (math.cos(0.6) - math.cos(0.5) + 0.1)  # anchor 0: semi-hard 0.6
        + 0.0  # anchor 0.5: semi-hard −2, far outside the margin
        + (math.cos(0.6) - math.cos(2.6) + 0.1)  # anchor 0.6: fallback to 0
        + (math.cos(2.5) - math.cos(2.6) + 0.1)  # anchor −2: fallback to 0.5
    ) / 4
    assert expected == pytest.approx(closed_form, rel=1e-12)
    value = SemiHardTripletLoss(margin=0.1)(
        circle(ANGLES, [1.0, 0.1, 4.0, 2.0]), torch.tensor(LABELS)
    )
    assert value.item() == pytest.approx(closed_form, rel=1e-9)


def test_rejects_negative_margin():
    with pytest.raises(ValueError, match="margin"):
        SemiHardTripletLoss(margin=-0.1)
