"""BN-Inception (Ioffe & Szegedy 2015), the backbone of the SEC paper and most DML work.

No maintained package ships it (``pretrainedmodels`` is unmaintained; timm has
Inception-v3, not BN-Inception), so the published architecture is written here. Module
names follow the Caffe port every DML code base loads (``conv1_7x7_s2``,
``inception_3a_1x1_bn``, ..., ``last_linear``), so its ImageNet weight file fits.
Those weights expect BGR pixels in 0..255 minus (104, 117, 128): the model converts its
ImageNet-normalised RGB input to that first, so the data pipeline stays the same.
"""

from __future__ import annotations

from typing import ClassVar, NamedTuple

import torch
from torch import Tensor, nn

from sphere_engine.data.image_folder_data import IMAGENET_MEAN, IMAGENET_STD
from sphere_engine.models.backbone import Backbone
from sphere_engine.models.pooling import PoolingName
from sphere_engine.models.registry import MODELS

_CAFFE_MEAN_BGR = (104.0, 117.0, 128.0)


class _Block(NamedTuple):
    """One inception block: branch widths (0: no such branch), stride 2 for the
    reducing blocks (3c, 4e), and the pooling branch's kind."""

    name: str
    one: int
    reduce3: int
    conv3: int
    reduce_double: int
    double: int
    pool_proj: int
    pool: str  # "avg" or "max"
    stride: int = 1


_BLOCKS = (
    _Block("3a", 64, 64, 64, 64, 96, 32, "avg"),
    _Block("3b", 64, 64, 96, 64, 96, 64, "avg"),
    _Block("3c", 0, 128, 160, 64, 96, 0, "max", 2),
    _Block("4a", 224, 64, 96, 96, 128, 128, "avg"),
    _Block("4b", 192, 96, 128, 96, 128, 128, "avg"),
    _Block("4c", 160, 128, 160, 128, 160, 128, "avg"),
    _Block("4d", 96, 128, 192, 160, 192, 128, "avg"),
    _Block("4e", 0, 128, 192, 192, 256, 0, "max", 2),
    _Block("5a", 352, 192, 320, 160, 224, 128, "avg"),
    _Block("5b", 352, 192, 320, 192, 224, 128, "max"),
)


class _Branch(nn.Module):
    """Convolutions (each + BatchNorm + ReLU) registered on ``owner`` under the Caffe
    names, run in order."""

    def __init__(self, owner: nn.Module, layers: list[tuple[str, nn.Module]]) -> None:
        super().__init__()
        self.names = [name for name, _ in layers]
        for name, module in layers:
            owner.add_module(name, module)
        self._owner = [owner]  # not a submodule: the modules live on the owner

    def forward(self, x: Tensor) -> Tensor:
        owner = self._owner[0]
        for name in self.names:
            x = getattr(owner, name)(x)
        return x


def _conv_bn(prefix: str, c_in: int, c_out: int, kernel: int, stride: int = 1):
    padding = kernel // 2
    return [
        (prefix, nn.Conv2d(c_in, c_out, kernel, stride=stride, padding=padding)),
        (f"{prefix}_bn", nn.BatchNorm2d(c_out)),
        (f"{prefix}_relu", nn.ReLU(inplace=True)),
    ]


class BNInceptionTrunk(nn.Module):
    """The convolutional part of BN-Inception: (N, 3, S, S) → (N, 1024, S/32, S/32)."""

    def __init__(self, in_channels: int = 3) -> None:
        super().__init__()
        self.stem = _Branch(
            self,
            [
                *_conv_bn("conv1_7x7_s2", in_channels, 64, 7, 2),
                ("pool1_3x3_s2", nn.MaxPool2d(3, 2, ceil_mode=True)),
                *_conv_bn("conv2_3x3_reduce", 64, 64, 1),
                *_conv_bn("conv2_3x3", 64, 192, 3),
                ("pool2_3x3_s2", nn.MaxPool2d(3, 2, ceil_mode=True)),
            ],
        )
        self.blocks: list[list[_Branch]] = []
        width = 192
        for block in _BLOCKS:
            width = self._add_block(block, width)
        self.num_features = width

    def _add_block(self, b: _Block, c_in: int) -> int:
        p = f"inception_{b.name}"
        branches = []
        if b.one:
            branches.append(_Branch(self, _conv_bn(f"{p}_1x1", c_in, b.one, 1)))
        branches.append(
            _Branch(
                self,
                [
                    *_conv_bn(f"{p}_3x3_reduce", c_in, b.reduce3, 1),
                    *_conv_bn(f"{p}_3x3", b.reduce3, b.conv3, 3, b.stride),
                ],
            )
        )
        branches.append(
            _Branch(
                self,
                [
                    *_conv_bn(f"{p}_double_3x3_reduce", c_in, b.reduce_double, 1),
                    *_conv_bn(f"{p}_double_3x3_1", b.reduce_double, b.double, 3),
                    *_conv_bn(f"{p}_double_3x3_2", b.double, b.double, 3, b.stride),
                ],
            )
        )
        if b.stride == 2:
            pool: nn.Module = nn.MaxPool2d(3, 2, ceil_mode=True)
        elif b.pool == "max":
            pool = nn.MaxPool2d(3, 1, padding=1, ceil_mode=True)
        else:
            pool = nn.AvgPool2d(3, 1, padding=1, ceil_mode=True, count_include_pad=True)
        pool_layers: list[tuple[str, nn.Module]] = [(f"{p}_pool", pool)]
        if b.pool_proj:
            pool_layers += _conv_bn(f"{p}_pool_proj", c_in, b.pool_proj, 1)
        branches.append(_Branch(self, pool_layers))
        self.blocks.append(branches)
        return b.one + b.conv3 + b.double + (b.pool_proj or c_in)

    def forward(self, x: Tensor) -> Tensor:
        x = self.stem(x)
        for branches in self.blocks:
            x = torch.cat([branch(x) for branch in branches], 1)
        return x


@MODELS.register("bninception")
class BNInception(Backbone):
    """BN-Inception (1024 features) with pooling and the embedding layer; 227 px by
    default as in the DML papers."""

    default_image_size = 227
    min_image_size = 32
    weights_source = "torch_hub"
    #: The file name of the ImageNet weights in the torch-hub cache (as the Caffe port's
    #: loader saves them there).
    hub_filename: ClassVar[str] = "bn_inception-52deb4733.pth"
    param_help: ClassVar[dict[str, str]] = {
        "pooling": "Global pooling of the last feature map: avg, max or avg+max",
    }
    classifier_prefixes = ("last_linear.",)

    def __init__(
        self,
        input_shape: tuple[int, ...],
        embedding_dim: int,
        embedding_bn: bool = False,
        weight_norm: bool = False,
        pooling: PoolingName = "avg",
    ) -> None:
        self.check_image_shape(input_shape, "bninception")
        trunk = BNInceptionTrunk(input_shape[0])
        super().__init__(
            trunk, trunk.num_features, embedding_dim, embedding_bn, weight_norm, pooling
        )
        rgb = input_shape[0] == 3
        mean = torch.tensor(IMAGENET_MEAN if rgb else (0.5,) * input_shape[0])
        std = torch.tensor(IMAGENET_STD if rgb else (0.5,) * input_shape[0])
        caffe = torch.tensor(_CAFFE_MEAN_BGR if rgb else (117.0,) * input_shape[0])
        self.register_buffer("_mean", mean.view(1, -1, 1, 1), persistent=False)
        self.register_buffer("_std", std.view(1, -1, 1, 1), persistent=False)
        self.register_buffer("_caffe_mean", caffe.view(1, -1, 1, 1), persistent=False)
        self._bgr = rgb

    def forward_features(self, x: Tensor) -> Tensor:
        pixels = (x * self._std + self._mean) * 255.0
        if self._bgr:
            pixels = pixels.flip(1)
        return self.features(pixels - self._caffe_mean)
