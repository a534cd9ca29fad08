import math

import pytest
import torch

from sphere_engine.losses import NTXentLoss

# Two views of three instances: view 1 at 0, 2, 4 rad; view 2 slightly rotated.
ANGLES = [0.0, 2.0, 4.0, 0.3, 2.5, 3.9]
LABELS = [0, 1, 2, 0, 1, 2]


def test_matches_hand_computation(circle, cosines):
    c = cosines(ANGLES)
    tau = 0.5
    losses = []
    for i in range(6):
        j = (i + 3) % 6  # the other view
        denominator = sum(math.exp(c[i][k] / tau) for k in range(6) if k != i)
        losses.append(-math.log(math.exp(c[i][j] / tau) / denominator))
    expected = sum(losses) / 6
    value = NTXentLoss()(circle(ANGLES, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), torch.tensor(LABELS))
    assert value.item() == pytest.approx(expected, rel=1e-9)


def test_traits_say_two_views_and_no_pk_batches():
    assert NTXentLoss.traits.requires_views is True
    assert NTXentLoss.traits.needs_positives is False


@pytest.mark.parametrize("labels", [[0, 0, 0, 1, 1, 1], [0, 1, 2, 3, 4, 5], [0, 0, 1, 1, 1, 2]])
def test_rejects_labels_that_are_not_two_views(circle, labels):
    with pytest.raises(ValueError, match="exactly twice"):
        NTXentLoss()(circle(ANGLES), torch.tensor(labels))
