"""Properties every registered loss must have, parametrised from the registry."""

import pytest
import torch

from sphere_engine.losses import LOSSES


def pk_batch(loss, classes=4, per_class=4, dim=8, seed=0):
    generator = torch.Generator().manual_seed(seed)
    size = classes * per_class
    embeddings = torch.randn(size, dim, generator=generator, dtype=torch.float64)
    if loss.traits.requires_views:
        labels = torch.arange(size // 2).repeat(2)
    else:
        labels = torch.arange(classes).repeat_interleave(per_class)
    return embeddings, labels


@pytest.mark.parametrize("name", LOSSES.names())
def test_finite_scalar_and_finite_gradients(name):
    loss = LOSSES.create(name)
    embeddings, labels = pk_batch(loss)
    embeddings.requires_grad_()
    value = loss(embeddings, labels)
    value.backward()
    assert value.dim() == 0
    assert torch.isfinite(value)
    assert value.item() > 0  # a random batch is never solved
    assert torch.isfinite(embeddings.grad).all()
    assert embeddings.grad.abs().sum() > 0


@pytest.mark.parametrize("name", LOSSES.names())
def test_invariant_to_embedding_norms(name):
    loss = LOSSES.create(name)
    embeddings, labels = pk_batch(loss)
    scales = torch.linspace(0.1, 10.0, len(labels), dtype=torch.float64)[:, None]
    original = loss(embeddings, labels)
    rescaled = loss(embeddings * scales, labels)
    assert rescaled.item() == pytest.approx(original.item(), rel=1e-9)


@pytest.mark.parametrize("name", LOSSES.names())
def test_gradient_is_orthogonal_to_the_embedding(name):
    # SCIENCE.md §1: losses on normalised embeddings only rotate f_i.
    loss = LOSSES.create(name)
    embeddings, labels = pk_batch(loss)
    embeddings.requires_grad_()
    loss(embeddings, labels).backward()
    radial = (embeddings.grad * torch.nn.functional.normalize(embeddings, dim=1)).sum(dim=1)
    assert radial.abs().max().item() < 1e-9 * max(1.0, embeddings.grad.abs().max().item())
