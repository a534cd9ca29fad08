"""Tracked samples embedded in the training forward pass (rows that do not interact)."""

from __future__ import annotations

import torch

from sphere_engine.models import create_model
from sphere_engine.tracked_samples import forward_with_tracked, rides_along


def _gradients(model: torch.nn.Module, embeddings: torch.Tensor) -> list[torch.Tensor]:
    model.zero_grad(set_to_none=True)
    (embeddings.square().sum() + embeddings[:, 0].sum()).backward()
    return [p.grad.clone() for p in model.parameters()]


def test_tracked_rows_ride_along_without_changing_the_batch_or_its_gradient() -> None:
    torch.manual_seed(0)
    model = create_model("mlp", (64,), 16)
    model.train()
    inputs, tracked = torch.randn(40, 64), torch.randn(6, 64)
    assert rides_along(model)

    embeddings, tracked_embeddings = forward_with_tracked(model, inputs, tracked)
    assert embeddings.shape == (40, 16) and embeddings.requires_grad
    assert not tracked_embeddings.requires_grad  # nothing reaches the weights through them
    with torch.no_grad():
        torch.testing.assert_close(tracked_embeddings, model(tracked))
    fused = _gradients(model, embeddings)
    bare = _gradients(model, model(inputs))
    for got, expected in zip(fused, bare, strict=True):
        torch.testing.assert_close(got, expected)  # the tracked rows add no gradient


def test_models_with_batch_coupling_do_not_take_tracked_rows() -> None:
    assert rides_along(create_model("lenetpp", (1, 28, 28), 2))
    # BatchNorm from an option couples the rows, whatever the model declares
    assert not rides_along(create_model("mlp", (64,), 16, embedding_bn=True))
    assert not rides_along(create_model("resnet18", (3, 32, 32), 16))  # BatchNorm inside
    assert not rides_along(torch.nn.Linear(4, 2))  # declares nothing: a pass of its own
