import math

import pytest
import torch
from torch import nn

from sphere_engine.losses import ClassifierLoss
from sphere_engine.regularizers import REGULARIZERS


class AdditiveMarginStub(nn.Module):
    """Logits f·w_k with the target logit lowered by 1 when labels are given."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]]))
        self.seen_labels = None

    def forward(self, embeddings, labels=None):
        self.seen_labels = labels
        logits = embeddings @ self.weight.T
        if labels is not None:
            logits = logits - nn.functional.one_hot(labels, 3).to(logits.dtype)
        return logits


def test_cross_entropy_on_margin_logits_by_hand():
    head = AdditiveMarginStub()
    embeddings = torch.tensor([[2.0, 1.0], [0.0, 3.0]])
    labels = torch.tensor([0, 1])
    value = ClassifierLoss(head)(embeddings, labels)
    # Sample 0: logits (2 − 1, 1, −2); sample 1: logits (0, 3 − 1, 0).
    first = -math.log(math.exp(1) / (math.exp(1) + math.exp(1) + math.exp(-2)))
    second = -math.log(math.exp(2) / (math.exp(0) + math.exp(2) + math.exp(0)))
    assert value.item() == pytest.approx((first + second) / 2, rel=1e-6)
    assert torch.equal(head.seen_labels, labels)


def test_head_parameters_are_trained_through_the_loss():
    head = AdditiveMarginStub()
    loss = ClassifierLoss(head)
    loss(torch.tensor([[2.0, 1.0]]), torch.tensor([2])).backward()
    assert head.weight.grad is not None and head.weight.grad.abs().sum() > 0
    assert any(p is head.weight for p in loss.parameters())


def test_composes_with_a_regulariser():
    loss = ClassifierLoss(
        AdditiveMarginStub(),
        embedding_regularizer=REGULARIZERS.create("l2", 2, 3),
        embedding_reg_weight=0.5,
    )
    embeddings = torch.tensor([[2.0, 1.0], [0.0, 3.0]])
    total = loss(embeddings, torch.tensor([0, 1]))
    assert loss.last_terms["l2"].item() == pytest.approx((5 + 9) / 2)
    assert total.item() == pytest.approx(loss.last_terms["metric"].item() + 0.5 * 7.0)


def test_label_outside_the_head_classes_raises_before_the_head_runs():
    head = AdditiveMarginStub()
    head.num_classes = 3
    with pytest.raises(ValueError, match=r"labels: values must be in 0\.\.2"):
        ClassifierLoss(head)(torch.ones(2, 2), torch.tensor([0, 3]))
    assert head.seen_labels is None


def test_label_outside_the_logits_raises_for_a_head_without_num_classes():
    class PlainLinear(nn.Linear):
        def forward(self, embeddings, labels=None):
            return super().forward(embeddings)

    loss = ClassifierLoss(PlainLinear(2, 3))
    with pytest.raises(ValueError, match=r"labels: values must be in 0\.\.2"):
        loss(torch.ones(2, 2), torch.tensor([-1, 0]))
