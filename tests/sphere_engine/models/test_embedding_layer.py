import pytest
import torch

from sphere_engine.models import EmbeddingLayer


def test_plain_linear():
    layer = EmbeddingLayer(4, 3)
    x = torch.randn(5, 4)
    torch.testing.assert_close(layer(x), x @ layer.linear.weight.T + layer.linear.bias)
    assert isinstance(layer.bn, torch.nn.Identity)


def test_weight_norm_reparametrises_the_weight():
    layer = EmbeddingLayer(4, 3, weight_norm=True)
    params = dict(layer.named_parameters())
    assert "linear.parametrizations.weight.original0" in params  # g, one per output
    assert params["linear.parametrizations.weight.original0"].shape == (3, 1)
    with torch.no_grad():
        params["linear.parametrizations.weight.original0"].fill_(2.0)
    torch.testing.assert_close(layer.linear.weight.norm(dim=1), torch.full((3,), 2.0))


def test_batch_norm_on_the_embedding():
    layer = EmbeddingLayer(4, 3, embedding_bn=True).train()
    out = layer(torch.randn(32, 4) * 5 + 3)
    torch.testing.assert_close(out.mean(0), torch.zeros(3), atol=1e-5, rtol=0)
    torch.testing.assert_close(out.std(0, unbiased=False), torch.ones(3), atol=1e-3, rtol=0)


def test_bad_sizes():
    with pytest.raises(ValueError, match=r"model\.embedding_dim: 0 must be >= 1"):
        EmbeddingLayer(4, 0)
