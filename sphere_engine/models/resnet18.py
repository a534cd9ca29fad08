"""ResNet-18 backbone (torchvision), optionally from local ImageNet weights."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import torch
from torch import Tensor, nn

from sphere_engine.models.embedding_layer import EmbeddingLayer
from sphere_engine.models.registry import MODELS
from sphere_engine.registry import ComponentTraits
from sphere_engine.tv_compat import torchvision


def _load_state_dict(model: nn.Module, weights_path: str) -> None:
    path = Path(weights_path)
    if not path.is_file():
        raise ValueError(
            f"model.options.weights_path: {weights_path!r} does not exist; give a local "
            "torchvision resnet18 ImageNet state dict (.pth) or leave it empty"
        )
    state = torch.load(path, map_location="cpu", weights_only=True)
    if isinstance(state, dict) and isinstance(state.get("state_dict"), dict):
        state = state["state_dict"]
    try:
        model.load_state_dict(state)
    except (RuntimeError, TypeError, AttributeError) as error:
        raise ValueError(
            f"model.options.weights_path: {weights_path!r} is not a resnet18 state dict "
            f"({str(error).splitlines()[0]})"
        ) from error


@MODELS.register("resnet18")
class ResNet18(nn.Module):
    """torchvision's resnet18 (random init unless ``weights_path``), its ``fc`` replaced
    by the embedding layer. ``small_input`` (for images up to about 64 px) swaps the
    7×7 stride-2 stem for a 3×3 stride-1 one and drops the max-pool, as for CIFAR; the
    new stem is freshly initialised even with loaded weights. Inputs with other than 3
    channels get a new first convolution (from loaded weights: their channel mean)."""

    traits: ClassVar[ComponentTraits] = ComponentTraits(needs_embedding_dim=True)
    param_help: ClassVar[dict[str, str]] = {
        "weights_path": "Local ImageNet state dict of torchvision resnet18 (empty: random init)",
        "small_input": "3×3 stride-1 stem without max-pool, for small images (≤ 64 px)",
    }

    def __init__(
        self,
        input_shape: tuple[int, ...],
        embedding_dim: int,
        embedding_bn: bool = False,
        weight_norm: bool = False,
        weights_path: str = "",
        small_input: bool = True,
    ) -> None:
        super().__init__()
        if len(input_shape) != 3:
            raise ValueError(
                f"input_shape: {tuple(input_shape)!r} is not allowed for resnet18; it needs "
                "images (C, H, W)"
            )
        channels = input_shape[0]
        net = torchvision.models.resnet18(weights=None)
        if weights_path:
            _load_state_dict(net, weights_path)
        if small_input:
            net.conv1 = nn.Conv2d(channels, 64, 3, stride=1, padding=1, bias=False)
            net.maxpool = nn.Identity()
        elif channels != 3:
            old = net.conv1.weight.detach()
            net.conv1 = nn.Conv2d(channels, 64, 7, stride=2, padding=3, bias=False)
            if weights_path:
                with torch.no_grad():
                    net.conv1.weight.copy_(old.mean(1, keepdim=True).expand_as(net.conv1.weight))
        net.fc = EmbeddingLayer(net.fc.in_features, embedding_dim, embedding_bn, weight_norm)
        self.net = net

    @property
    def embedding(self) -> EmbeddingLayer:
        return self.net.fc

    def forward(self, x: Tensor) -> Tensor:
        """``x``: images (N, C, H, W). Returns embeddings (N, embedding_dim)."""
        return self.net(x)
