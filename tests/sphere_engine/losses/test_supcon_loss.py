import math

import pytest
import torch

from sphere_engine.losses import SupConLoss

ANGLES = [0.0, 0.4, 1.0, 0.5, 2.5, -1.5]
LABELS = [0, 0, 0, 1, 1, 2]  # the class-2 sample has no positive: not an anchor


def test_matches_hand_computation(circle, cosines):
    c = cosines(ANGLES)
    tau = 0.1
    per_anchor = []
    for i in range(6):
        positives = [p for p in range(6) if p != i and LABELS[p] == LABELS[i]]
        if not positives:
            continue
        denominator = sum(math.exp(c[i][a] / tau) for a in range(6) if a != i)
        log_probs = [math.log(math.exp(c[i][p] / tau) / denominator) for p in positives]
        per_anchor.append(-sum(log_probs) / len(positives))
    assert len(per_anchor) == 5
    expected = sum(per_anchor) / len(per_anchor)
    value = SupConLoss(temperature=tau)(
        circle(ANGLES, [1.0, 0.5, 2.0, 3.0, 1.0, 9.0]), torch.tensor(LABELS)
    )
    assert value.item() == pytest.approx(expected, rel=1e-9)


def test_rejects_non_positive_temperature():
    with pytest.raises(ValueError, match="temperature"):
        SupConLoss(temperature=0.0)
