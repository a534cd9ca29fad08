"""torchvision's ResNet-18 and ResNet-50 as backbones (official weight files fit)."""

from __future__ import annotations

from collections import OrderedDict
from typing import ClassVar

from torch import nn

from sphere_engine.models.backbone import Backbone
from sphere_engine.models.pooling import PoolingName
from sphere_engine.models.registry import MODELS
from sphere_engine.tv_compat import torchvision

_TRUNK = ("conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3", "layer4")
#: Images up to this side get the small-input stem when ``small_input`` is left automatic.
SMALL_INPUT_SIDE = 64


class TorchvisionResNet(Backbone):
    """The torchvision ResNet ``arch`` up to ``layer4`` (its ``fc`` dropped), then
    pooling and the embedding layer. State dict keys under ``features`` are
    torchvision's, so its weight files (and timm's ResNets) load as they are.

    ``small_input`` (default: for images up to 64 px) swaps the 7×7 stride-2 stem for a
    3×3 stride-1 one and drops the max-pool, as for CIFAR; that stem is freshly
    initialised even with pretrained weights. Inputs with other than 3 channels get a
    new first convolution (from pretrained weights: their channel mean)."""

    arch: ClassVar[str] = ""
    default_image_size = 224
    min_image_size = 8
    weights_source = "torchvision"
    param_help: ClassVar[dict[str, str]] = {
        "pooling": "Global pooling of the last feature map: avg, max or avg+max",
        "small_input": "3×3 stride-1 stem without max-pool (default: for images ≤ 64 px)",
    }

    def __init__(
        self,
        input_shape: tuple[int, ...],
        embedding_dim: int,
        embedding_bn: bool = False,
        weight_norm: bool = False,
        pooling: PoolingName = "avg",
        small_input: bool | None = None,
    ) -> None:
        self.check_image_shape(input_shape, self.arch)
        channels = input_shape[0]
        if small_input is None:
            small_input = max(input_shape[1:]) <= SMALL_INPUT_SIDE
        net = getattr(torchvision.models, self.arch)(weights=None)
        reinitialised = set()
        if small_input:
            net.conv1 = nn.Conv2d(channels, 64, 3, stride=1, padding=1, bias=False)
            net.maxpool = nn.Identity()
            reinitialised.add("conv1.weight")
        elif channels != 3:
            net.conv1 = nn.Conv2d(channels, 64, 7, stride=2, padding=3, bias=False)
        trunk = nn.Sequential(OrderedDict((name, getattr(net, name)) for name in _TRUNK))
        super().__init__(
            trunk, net.fc.in_features, embedding_dim, embedding_bn, weight_norm, pooling
        )
        self.reinitialised_keys = reinitialised


@MODELS.register("resnet18")
class ResNet18(TorchvisionResNet):
    """ResNet-18 (torchvision; 512 features)."""

    arch = "resnet18"


@MODELS.register("resnet50")
class ResNet50(TorchvisionResNet):
    """ResNet-50 (torchvision; 2048 features)."""

    arch = "resnet50"
