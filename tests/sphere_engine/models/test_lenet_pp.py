import pytest
import torch

from sphere_engine.models import create_model


@pytest.mark.parametrize(
    ("shape", "flat"), [((1, 28, 28), 128 * 3 * 3), ((3, 32, 32), 128 * 4 * 4)]
)
def test_architecture(shape, flat):
    model = create_model("lenetpp", shape, 2)
    convs = [m for m in model.features.modules() if isinstance(m, torch.nn.Conv2d)]
    assert [c.out_channels for c in convs] == [32, 32, 64, 64, 128, 128]
    assert all(c.kernel_size == (5, 5) and c.padding == (2, 2) for c in convs)
    assert convs[0].in_channels == shape[0]
    assert sum(isinstance(m, torch.nn.PReLU) for m in model.features.modules()) == 6
    assert model.embedding.linear.in_features == flat
    assert model(torch.randn(2, *shape)).shape == (2, 2)


@pytest.mark.parametrize("shape", [(64,), (1, 4, 4)])
def test_rejects_vectors_and_tiny_images(shape):
    with pytest.raises(ValueError, match="not allowed for lenetpp"):
        create_model("lenetpp", shape, 2)
