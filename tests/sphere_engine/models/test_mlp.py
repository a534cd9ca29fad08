import pytest
import torch

from sphere_engine.models import create_model


def test_hidden_dims_and_activation():
    model = create_model("mlp", (2, 3), 4, hidden_dims=[5], activation="prelu")
    linears = [m for m in model.features if isinstance(m, torch.nn.Linear)]
    assert [(m.in_features, m.out_features) for m in linears] == [(6, 5)]
    assert isinstance(model.features[-1], torch.nn.PReLU)
    assert model(torch.randn(2, 2, 3)).shape == (2, 4)


def test_default_is_two_hidden_layers_of_128_with_relu():
    model = create_model("mlp", (64,), 16)
    linears = [m for m in model.features if isinstance(m, torch.nn.Linear)]
    assert [m.out_features for m in linears] == [128, 128]
    assert sum(isinstance(m, torch.nn.ReLU) for m in model.features) == 2


def test_no_hidden_layers_is_one_linear_map():
    model = create_model("mlp", (3,), 2, hidden_dims=[])
    x = torch.randn(4, 3)
    linear = model.embedding.linear
    torch.testing.assert_close(model(x), x @ linear.weight.T + linear.bias)


def test_bad_activation():
    with pytest.raises(
        ValueError,
        match=r"^model\.options\.activation: 'swish' is out of range; must be one of 'relu'",
    ):
        create_model("mlp", (3,), 2, activation="swish")
