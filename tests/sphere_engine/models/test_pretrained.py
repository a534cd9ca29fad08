"""model.pretrained: weights files arrive in the model, or the launch fails naming them."""

import hashlib

import pytest
import torch
from safetensors.torch import save_file

from sphere_engine.config import RunConfig
from sphere_engine.models.build import build_backbone, check_backbone
from sphere_engine.tv_compat import torchvision
from sphere_engine.validation import validate


def model_config(**model):
    return RunConfig.from_dict({"model": {"name": "resnet18", "embedding_dim": 8, **model}}).model


@pytest.fixture(scope="module")
def resnet18_file(tmp_path_factory):
    torch.manual_seed(3)
    reference = torchvision.models.resnet18(weights=None)
    path = tmp_path_factory.mktemp("weights") / "resnet18.pth"
    torch.save(reference.state_dict(), path)
    return path, reference


def test_weights_file_arrives_with_its_sha256(resnet18_file):
    path, reference = resnet18_file
    model, weights = build_backbone(model_config(pretrained=str(path)), (3, 96, 96))
    assert torch.equal(model.features.layer3[1].conv2.weight, reference.layer3[1].conv2.weight)
    assert torch.equal(model.features.conv1.weight, reference.conv1.weight)
    assert weights.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert weights.file == str(path.resolve())
    assert model.frozen_bn  # on by default with pretrained weights


def test_safetensors_and_single_channel_input(resnet18_file, tmp_path):
    _, reference = resnet18_file
    path = tmp_path / "resnet18.safetensors"
    save_file({k: v.contiguous() for k, v in reference.state_dict().items()}, str(path))
    model, _ = build_backbone(model_config(pretrained=str(path), frozen_bn=False), (1, 96, 96))
    expected = reference.conv1.weight.mean(1, keepdim=True)
    torch.testing.assert_close(model.features.conv1.weight, expected)
    assert not model.frozen_bn


def test_resnet18_file_given_to_resnet50_fails_naming_file_and_keys(resnet18_file):
    path, _ = resnet18_file
    with pytest.raises(ValueError) as caught:
        check_backbone(model_config(name="resnet50", pretrained=str(path)), (3, 96, 96))
    message = str(caught.value)
    assert message.startswith(f"model.pretrained: '{path}' does not fit resnet50")
    assert "layer1.0.conv1.weight (64, 64, 3, 3) vs (64, 64, 1, 1)" in message
    assert "missing" in message and "\n" not in message


def test_missing_and_unreadable_files_fail_at_launch(tmp_path):
    broken = tmp_path / "broken.pth"
    broken.write_bytes(b"not a checkpoint")
    for value, expected in (
        (str(tmp_path / "nope.pth"), "does not exist"),
        (str(broken), "is not a readable weights file"),
    ):
        with pytest.raises(ValueError, match=rf"^model.pretrained: .*{expected}"):
            check_backbone(model_config(pretrained=value), (3, 32, 32))


def test_true_without_a_cache_says_so_and_never_downloads(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    with pytest.raises(ValueError, match="not in the local torch hub cache"):
        check_backbone(model_config(pretrained=True), (3, 96, 96))
    with pytest.raises(ValueError, match="bninception's ImageNet weights are not in the local"):
        check_backbone(model_config(name="bninception", pretrained="true"), (3, 96, 96))


def test_validate_checks_the_weights_of_the_run(resnet18_file):
    path, _ = resnet18_file
    config = RunConfig.from_dict(
        {
            "data": {"name": "digits", "image_size": 0},
            "model": {"name": "mlp", "pretrained": str(path)},
        }
    )
    with pytest.raises(ValueError, match=r"^model\.pretrained: backbone 'mlp' has no pretrained"):
        validate(config)
