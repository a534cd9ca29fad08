import pytest
import torch

from sphere_engine.regularizers import L2NormRegularizer


def test_value_and_gradient_by_hand():
    embeddings = torch.tensor([[3.0, 4.0], [1.0, 0.0], [0.0, -2.0]], requires_grad=True)
    value = L2NormRegularizer(2, 3)(embeddings, torch.tensor([0, 1, 2]))
    assert value.item() == pytest.approx((25 + 1 + 4) / 3)
    value.backward()
    assert torch.allclose(embeddings.grad, 2 * embeddings.detach() / 3)


def test_zero_embedding_has_zero_gradient():
    embeddings = torch.zeros(2, 3, requires_grad=True)
    L2NormRegularizer(3, 1)(embeddings, torch.tensor([0, 0])).backward()
    assert torch.equal(embeddings.grad, torch.zeros(2, 3))
