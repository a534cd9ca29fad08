"""The research backbones: architecture facts, pooling, frozen BatchNorm, timm by name."""

import pytest
import torch

from sphere_engine.catalogue.backbones import BACKBONE_SIZES, backbone_parameters
from sphere_engine.models import MODELS, create_model
from sphere_engine.models.bn_inception import BNInceptionTrunk
from sphere_engine.models.parameter_counts import parameter_count
from sphere_engine.models.pooling import GlobalPool
from sphere_engine.tv_compat import torchvision

TINY_VIT = {"model_args": {"depth": 1}}


def test_bninception_has_the_published_parameter_count():
    # 11,295,240 parameters with its 1000-class ImageNet classifier (1024 × 1000 + 1000)
    trunk = BNInceptionTrunk()
    assert sum(p.numel() for p in trunk.parameters()) + 1024 * 1000 + 1000 == 11_295_240
    assert trunk(torch.randn(1, 3, 64, 64)).shape == (1, 1024, 2, 2)


def test_bninception_keys_follow_the_caffe_port():
    keys = set(BNInceptionTrunk().state_dict())
    assert {"conv1_7x7_s2.weight", "inception_3a_1x1_bn.running_var"} <= keys
    assert "inception_5b_pool_proj.bias" in keys and "inception_3c_1x1.weight" not in keys


def test_resnets_match_torchvision_parameter_counts():
    for arch in ("resnet18", "resnet50"):
        with torch.device("meta"):
            reference = getattr(torchvision.models, arch)(weights=None)
            model = create_model(arch, (3, 96, 96), 16)
        fc = reference.fc.weight.numel() + reference.fc.bias.numel()
        embedding = reference.fc.in_features * 16 + 16
        total = sum(p.numel() for p in model.parameters())
        assert total == sum(p.numel() for p in reference.parameters()) - fc + embedding


def test_parameter_counts_need_no_weights():
    assert parameter_count("resnet50", 512) == 23_508_032 + 2048 * 512 + 512
    assert parameter_count("bninception", 512) == 11_295_240 - 1_025_000 + 1024 * 512 + 512


@pytest.mark.parametrize("name", MODELS.names())
def test_every_backbone_declares_the_parameter_count_it_has(name):
    """The Launch form's torch-free counts (``catalogue.backbones``) are the built
    models' counts, with and without embedding BN and weight norm."""
    declared = BACKBONE_SIZES[name]  # a registered backbone without a declaration fails
    for dim, bn, wn in ((512, False, False), (64, True, False), (128, False, True)):
        assert parameter_count(name, dim, bn, wn) == declared.parameters(dim, bn, wn)
    assert backbone_parameters(name, 512) == parameter_count(name, 512)


@pytest.mark.parametrize("kind", ["avg", "max", "avg+max"])
def test_pooling_kinds(kind):
    x = torch.arange(8.0).reshape(1, 2, 2, 2)
    expected = {"avg": [1.5, 5.5], "max": [3.0, 7.0], "avg+max": [4.5, 12.5]}[kind]
    assert GlobalPool(kind)(x).tolist() == [expected]
    tokens = x.flatten(2).transpose(1, 2)  # (N, T, C): pooled over the tokens
    assert GlobalPool(kind)(tokens).tolist() == [expected]
    with torch.device("meta"):
        model = create_model("resnet18", (3, 32, 32), 4, pooling=kind)
    assert model.pool.kind == kind


def test_unknown_pooling_names_the_option():
    with pytest.raises(ValueError, match=r"model\.options\.pooling"):
        create_model("resnet18", (3, 32, 32), 4, pooling="sum")


def test_frozen_batchnorm_keeps_statistics_but_trains_affine():
    model = create_model("resnet18", (3, 16, 16), 4, embedding_bn=True)
    model.freeze_batchnorm()
    model.train()
    bn = model.features.bn1
    before = bn.running_mean.clone()
    model(torch.randn(4, 3, 16, 16) * 3 + 1).sum().backward()
    assert torch.equal(bn.running_mean, before)
    assert bn.weight.grad is not None
    assert model.embedding.bn.training  # the embedding's own BatchNorm still learns


def test_vit_by_name_and_patch_minimum():
    model = create_model("vit_small_patch16_224", (3, 32, 32), 8, **TINY_VIT)
    assert model(torch.randn(2, 3, 32, 32)).shape == (2, 8)
    with pytest.raises(ValueError, match="at least 16"):
        create_model("vit_small_patch16_224", (3, 8, 8), 8, **TINY_VIT)


def test_any_timm_model_by_prefix_and_close_matches():
    model = create_model("timm/resnet10t", (3, 32, 32), 8, pooling="avg+max")
    assert model(torch.randn(2, 3, 32, 32)).shape == (2, 8)
    assert "timm/resnet10t" in MODELS
    with pytest.raises(ValueError, match="did you mean timm/resnet10t"):
        create_model("timm/resnet10", (3, 32, 32), 8)


def test_head_lr_trains_the_embedding_layer_and_lr_the_trunk():
    from sphere_engine.config import RunConfig
    from sphere_engine.optim import build_optimizer

    config = RunConfig.from_dict({"optimizer": {"lr": 1e-5, "head_lr": 1e-3}}).optimizer
    with torch.device("meta"):
        model = create_model("resnet18", (3, 32, 32), 4)
    head = torch.nn.Linear(2, 2, device="meta")
    groups = {g["name"]: g for g in build_optimizer(config, model, head.parameters()).param_groups}
    head_ids = {id(p) for p in groups["head"]["params"]}
    assert groups["head"]["lr"] == 1e-3 and groups["backbone"]["lr"] == 1e-5
    assert id(model.embedding.linear.weight) in head_ids and id(head.weight) in head_ids
    assert id(model.features.conv1.weight) not in head_ids
