import pytest
import torch
from torch import nn

from sphere_engine.regularizers import CenterLoss


def with_centres(centres):
    loss = CenterLoss(2, len(centres))
    with torch.no_grad():
        loss.centres.copy_(torch.tensor(centres))
    return loss


def test_centres_are_parameters_of_shape_classes_by_dim():
    loss = CenterLoss(5, 3)
    assert isinstance(loss.centres, nn.Parameter)
    assert loss.centres.shape == (3, 5)
    assert [p for p in loss.parameters()] == [loss.centres]


def test_value_by_hand():
    loss = with_centres([[0.0, 0.0], [1.0, 1.0]])
    embeddings = torch.tensor([[3.0, 4.0], [1.0, 2.0], [0.0, 0.0]])
    value = loss(embeddings, torch.tensor([0, 1, 1]))
    # ½ · (25 + 1 + 2) / 3
    assert value.item() == pytest.approx(0.5 * 28 / 3)


def test_pulls_features_and_centres_together():
    loss = with_centres([[0.0, 0.0], [1.0, 1.0]])
    embeddings = torch.tensor([[3.0, 4.0], [1.0, 2.0]], requires_grad=True)
    labels = torch.tensor([0, 1])
    loss(embeddings, labels).backward()
    # ∂L/∂f_i = (f_i − c_{y_i}) / N; ∂L/∂c_k = −(1/N) Σ_{y_i = k} (f_i − c_k).
    assert torch.allclose(embeddings.grad, torch.tensor([[1.5, 2.0], [0.0, 0.5]]))
    assert torch.allclose(loss.centres.grad, -embeddings.grad)
    with torch.no_grad():
        moved = embeddings - 0.1 * embeddings.grad
    assert loss(moved, labels).item() < loss(embeddings, labels).item()


@pytest.mark.parametrize("labels", [[0, 2], [-1, 0]])
def test_labels_out_of_range_raise(labels):
    with pytest.raises(ValueError, match=r"labels: values must be in 0\.\.1"):
        CenterLoss(2, 2)(torch.ones(2, 2), torch.tensor(labels))


def test_wrong_embedding_dim_raises():
    with pytest.raises(ValueError, match="embeddings: expected N × 2"):
        CenterLoss(2, 2)(torch.ones(2, 3), torch.tensor([0, 1]))
