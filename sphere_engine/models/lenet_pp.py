"""LeNet++ (Wen et al. 2016), the backbone of the centre-loss and RePoNet MNIST studies."""

from __future__ import annotations

from typing import ClassVar

from torch import nn

from sphere_engine.models.backbone import Backbone
from sphere_engine.models.registry import MODELS


def _stage(in_channels: int, out_channels: int) -> nn.Sequential:
    """Two 5×5 convolutions (padding 2) with PReLU, then 2×2 max-pooling (halves H, W)."""
    return nn.Sequential(
        nn.Conv2d(in_channels, out_channels, 5, padding=2),
        nn.PReLU(),
        nn.Conv2d(out_channels, out_channels, 5, padding=2),
        nn.PReLU(),
        nn.MaxPool2d(2),
    )


@MODELS.register("lenetpp")
class LeNetPP(Backbone):
    """conv 5×5 32-32, pool, 64-64, pool, 128-128, pool (PReLU), flatten, embedding
    layer. Images (C, H, W) with H, W ≥ 8: 1×28×28 gives 128×3×3 features, 3×32×32
    gives 128×4×4."""

    min_image_size = 8
    param_help: ClassVar[dict[str, str]] = {}

    def __init__(
        self,
        input_shape: tuple[int, ...],
        embedding_dim: int,
        embedding_bn: bool = False,
        weight_norm: bool = False,
    ) -> None:
        self.check_image_shape(input_shape, "lenetpp")
        channels, height, width = input_shape
        features = nn.Sequential(
            _stage(channels, 32), _stage(32, 64), _stage(64, 128), nn.Flatten()
        )
        flat = 128 * (height // 8) * (width // 8)
        super().__init__(features, flat, embedding_dim, embedding_bn, weight_norm)
