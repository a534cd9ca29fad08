import math

import pytest
import torch

from sphere_engine.regularizers import IsotropicRegularizer

LABELS = torch.tensor([0, 1, 0, 1])


def test_value_by_hand():
    # Centre (2, 0); squared radii 1, 1, 4, 4 → m = 2.5; L = mean(1.5²) = 2.25.
    embeddings = torch.tensor([[1.0, 0.0], [3.0, 0.0], [2.0, 2.0], [2.0, -2.0]])
    regularizer = IsotropicRegularizer(2, 2)
    assert regularizer(embeddings, LABELS).item() == pytest.approx(2.25)
    assert regularizer.diagnostics()["isotropic/m"].item() == pytest.approx(2.5)


def test_zero_on_a_sphere_around_any_centre():
    angles = [0.0, math.pi / 2, math.pi, 3 * math.pi / 2]  # centroid = circle centre
    embeddings = torch.tensor([[5 + 2 * math.cos(a), -1 + 2 * math.sin(a)] for a in angles])
    assert IsotropicRegularizer(2, 2)(embeddings, LABELS).item() == pytest.approx(0.0, abs=1e-9)


def test_gradients_sum_to_zero_and_match_finite_differences():
    embeddings = torch.randn(6, 3, dtype=torch.float64, requires_grad=True)
    labels = torch.tensor([0, 1, 2, 0, 1, 2])
    regularizer = IsotropicRegularizer(3, 3)
    regularizer(embeddings, labels).backward()
    assert embeddings.grad.sum(dim=0).abs().max().item() < 1e-12  # translation invariant
    assert embeddings.grad.abs().sum() > 0
    assert torch.autograd.gradcheck(lambda f: regularizer(f, labels), (embeddings,))
