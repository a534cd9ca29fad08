import pytest
import torch

from sphere_engine.models import create_model
from sphere_engine.tv_compat import torchvision


def test_small_input_stem():
    model = create_model("resnet18", (3, 32, 32), 8)
    assert model.net.conv1.kernel_size == (3, 3)
    assert model.net.conv1.stride == (1, 1)
    assert isinstance(model.net.maxpool, torch.nn.Identity)
    assert model.embedding.linear.in_features == 512


def test_imagenet_stem_kept_without_small_input():
    model = create_model("resnet18", (3, 64, 64), 8, small_input=False)
    assert model.net.conv1.kernel_size == (7, 7)
    assert isinstance(model.net.maxpool, torch.nn.MaxPool2d)
    assert model.eval()(torch.randn(2, 3, 64, 64)).shape == (2, 8)


def test_loads_local_weights(tmp_path):
    torch.manual_seed(0)
    reference = torchvision.models.resnet18(weights=None)
    path = tmp_path / "resnet18.pth"
    torch.save(reference.state_dict(), path)
    model = create_model("resnet18", (1, 64, 64), 8, weights_path=str(path), small_input=False)
    assert torch.equal(model.net.layer1[0].conv1.weight, reference.layer1[0].conv1.weight)
    # One-channel input: the stem is the channel mean of the RGB stem.
    torch.testing.assert_close(model.net.conv1.weight, reference.conv1.weight.mean(1, keepdim=True))


def test_missing_weights_file(tmp_path):
    missing = tmp_path / "nope.pth"
    with pytest.raises(ValueError, match=r"weights_path: .*nope\.pth.* does not exist"):
        create_model("resnet18", (3, 32, 32), 8, weights_path=str(missing))


def test_wrong_weights_file(tmp_path):
    path = tmp_path / "other.pth"
    torch.save({"weight": torch.zeros(2)}, path)
    with pytest.raises(ValueError, match="is not a resnet18 state dict"):
        create_model("resnet18", (3, 32, 32), 8, weights_path=str(path))


def test_rejects_vectors():
    with pytest.raises(ValueError, match="not allowed for resnet18"):
        create_model("resnet18", (64,), 8)
