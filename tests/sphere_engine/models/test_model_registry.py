import pytest
import torch

from sphere_engine.models import MODELS, create_model

INPUT_SHAPES = {
    "mlp": [(64,), (1, 8, 8), (3, 32, 32)],
    "lenetpp": [(1, 28, 28), (3, 32, 32), (1, 8, 8)],
    "resnet18": [(3, 16, 16), (1, 12, 12)],
}


def test_list_models():
    assert MODELS.names() == [
        "bninception",
        "lenetpp",
        "mlp",
        "resnet18",
        "resnet50",
        "vit_small_patch16_224",
    ]


@pytest.mark.parametrize(
    ("name", "shape"), [(n, s) for n, shapes in INPUT_SHAPES.items() for s in shapes]
)
def test_every_model_gives_n_by_d(name, shape):
    torch.manual_seed(0)
    model = create_model(name, shape, embedding_dim=7)
    out = model(torch.randn(3, *shape))
    assert out.shape == (3, 7)
    assert torch.isfinite(out).all()


@pytest.mark.parametrize("name", list(INPUT_SHAPES))
def test_embedding_bn_and_weight_norm_on_every_model(name):
    shape = INPUT_SHAPES[name][0]
    model = create_model(name, shape, 5, embedding_bn=True, weight_norm=True)
    embedding = model.embedding
    assert isinstance(embedding.bn, torch.nn.BatchNorm1d)
    assert hasattr(embedding.linear, "parametrizations")
    assert hasattr(embedding.linear.parametrizations, "weight")
    model.train()
    out = model(torch.randn(6, *shape))
    # Training-mode BatchNorm: each coordinate has zero mean over the batch.
    torch.testing.assert_close(out.mean(0), torch.zeros(5), atol=1e-5, rtol=0)


def test_fixed_args_are_not_user_options():
    assert set(MODELS.params("mlp")) == {"hidden_dims", "activation"}
    assert set(MODELS.params("resnet18")) == {"pooling", "small_input"}
    assert MODELS.params("lenetpp") == {}
    assert MODELS.params("mlp")["hidden_dims"].help


def test_unknown_model_and_option():
    with pytest.raises(ValueError, match="unknown model 'vgg'; known: bninception, lenetpp, mlp"):
        create_model("vgg", (64,), 8)
    with pytest.raises(ValueError, match="did you mean resnet50 or resnet18"):
        create_model("resnet5", (3, 32, 32), 8)
    with pytest.raises(ValueError, match=r"model\.options\.depth: unknown option"):
        create_model("mlp", (64,), 8, depth=3)


def test_bad_input_shape():
    with pytest.raises(ValueError, match="input_shape"):
        create_model("mlp", (0,), 8)
