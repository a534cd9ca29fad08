import pytest
import torch

from sphere_engine.models import create_model


def test_small_input_stem_by_default_for_small_images():
    model = create_model("resnet18", (3, 32, 32), 8)
    assert model.features.conv1.kernel_size == (3, 3)
    assert model.features.conv1.stride == (1, 1)
    assert isinstance(model.features.maxpool, torch.nn.Identity)
    assert model.embedding.linear.in_features == 512


def test_imagenet_stem_for_large_images_or_when_asked():
    assert create_model("resnet18", (3, 96, 96), 8).features.conv1.kernel_size == (7, 7)
    model = create_model("resnet18", (3, 64, 64), 8, small_input=False)
    assert model.features.conv1.kernel_size == (7, 7)
    assert isinstance(model.features.maxpool, torch.nn.MaxPool2d)
    assert model.eval()(torch.randn(2, 3, 64, 64)).shape == (2, 8)


def test_vector_input_is_rejected():
    with pytest.raises(ValueError, match="not allowed for resnet18"):
        create_model("resnet18", (64,), 8)
