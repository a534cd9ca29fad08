import pytest
import torch

from sphere_engine.losses import LOSSES
from sphere_engine.regularizers import REGULARIZERS


def batch(num_classes=4, per_class=3, dim=5, seed=0):
    generator = torch.Generator().manual_seed(seed)
    embeddings = torch.randn(num_classes * per_class, dim, generator=generator)
    labels = torch.arange(num_classes).repeat_interleave(per_class)
    return embeddings * torch.rand(len(labels), 1, generator=generator) * 3, labels


def test_rejects_one_dimensional_embeddings():
    with pytest.raises(ValueError, match="embeddings: expected an N × d tensor"):
        LOSSES.create("triplet")(torch.randn(6), torch.zeros(6, dtype=torch.long))


def test_rejects_length_mismatch():
    with pytest.raises(ValueError, match="5 labels for 6 embeddings"):
        LOSSES.create("triplet")(torch.randn(6, 2), torch.zeros(5, dtype=torch.long))


def test_rejects_float_labels():
    with pytest.raises(ValueError, match="labels: expected an integer dtype"):
        LOSSES.create("triplet")(torch.randn(6, 2), torch.zeros(6))


def test_rejects_integer_embeddings():
    with pytest.raises(ValueError, match="floating-point"):
        LOSSES.create("triplet")(
            torch.ones(6, 2, dtype=torch.long), torch.zeros(6, dtype=torch.long)
        )


def test_rejects_negative_regulariser_weight():
    with pytest.raises(ValueError, match="embedding_reg_weight"):
        LOSSES.create("triplet", embedding_reg_weight=-1.0)


def test_without_regulariser_last_terms_has_the_metric_only():
    embeddings, labels = batch()
    loss = LOSSES.create("supcon")
    value = loss(embeddings, labels)
    assert set(loss.last_terms) == {"metric"}
    assert loss.last_terms["metric"].item() == pytest.approx(value.item())


def test_composition_adds_weighted_sec_and_logs_both_terms():
    embeddings, labels = batch()
    plain = LOSSES.create("triplet", margin=0.2)(embeddings, labels)
    sec_value = REGULARIZERS.create("sec", 5, 4)(embeddings, labels)
    assert sec_value.item() > 0
    sec = REGULARIZERS.create("sec", 5, 4)
    loss = LOSSES.create("triplet", margin=0.2, embedding_regularizer=sec, embedding_reg_weight=0.7)
    total = loss(embeddings, labels)
    assert total.item() == pytest.approx(plain.item() + 0.7 * sec_value.item(), rel=1e-6)
    assert set(loss.last_terms) == {"metric", "sec"}
    assert loss.last_terms["metric"].item() == pytest.approx(plain.item(), rel=1e-6)
    assert loss.last_terms["sec"].item() == pytest.approx(sec_value.item(), rel=1e-6)
    assert not loss.last_terms["sec"].requires_grad


def test_zero_weight_still_logs_the_regulariser_term():
    embeddings, labels = batch()
    loss = LOSSES.create(
        "npair", embedding_regularizer=REGULARIZERS.create("l2", 5, 4), embedding_reg_weight=0.0
    )
    total = loss(embeddings, labels)
    expected_l2 = (embeddings**2).sum(dim=1).mean().item()
    assert loss.last_terms["l2"].item() == pytest.approx(expected_l2, rel=1e-6)
    assert total.item() == pytest.approx(loss.last_terms["metric"].item())


def test_regulariser_parameters_belong_to_the_loss():
    center = REGULARIZERS.create("center", 5, 4)
    loss = LOSSES.create("triplet", embedding_regularizer=center, embedding_reg_weight=0.1)
    assert any(p is center.centres for p in loss.parameters())
    assert "embedding_regularizer.centres" in loss.state_dict()
