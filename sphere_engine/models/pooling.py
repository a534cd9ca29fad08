"""Global pooling of a backbone's feature map into one feature vector per image."""

from __future__ import annotations

from typing import Literal

import torch
from torch import Tensor, nn

from sphere_engine.config.option_checks import check_choice

PoolingName = Literal["avg", "max", "avg+max"]
POOLINGS: dict[str, int] = {"avg": 1, "max": 1, "avg+max": 1}


class GlobalPool(nn.Module):
    """``avg``, ``max`` or ``avg+max`` (their sum, as DML papers use; the width stays
    the backbone's) over the spatial positions of (N, C, H, W) maps or the tokens of
    (N, T, C) sequences; (N, C) features pass through."""

    def __init__(self, kind: str = "avg") -> None:
        super().__init__()
        self.kind = check_choice("pooling", kind, POOLINGS)

    def forward(self, x: Tensor) -> Tensor:
        if x.dim() == 2:
            return x
        dims = (2, 3) if x.dim() == 4 else (1,)
        if self.kind == "avg":
            return x.mean(dims)
        peak = torch.amax(x, dims)
        return peak if self.kind == "max" else peak + x.mean(dims)
