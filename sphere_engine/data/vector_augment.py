"""Batch-level random augmentation of feature vectors (for the two NT-Xent views)."""

from __future__ import annotations

import torch
from torch import Tensor


class VectorAugment:
    """Gaussian noise plus random feature dropout (dropped features are set to zero)."""

    def __init__(self, noise_std: float = 0.1, drop_prob: float = 0.1) -> None:
        if noise_std < 0:
            raise ValueError(f"noise_std: {noise_std} must be >= 0")
        if not 0 <= drop_prob < 1:
            raise ValueError(f"drop_prob: {drop_prob} must be in [0, 1)")
        self.noise_std = noise_std
        self.drop_prob = drop_prob

    def __repr__(self) -> str:
        return f"VectorAugment(noise_std={self.noise_std}, drop_prob={self.drop_prob})"

    def __call__(self, x: Tensor, generator: torch.Generator | None = None) -> Tensor:
        """``x``: vectors (N, D), float. Returns an augmented batch (N, D)."""
        if x.dim() != 2:
            raise ValueError(f"x: expected vectors (N, D), got shape {tuple(x.shape)}")
        if self.noise_std:
            noise = torch.randn(x.shape, generator=generator, device=x.device, dtype=x.dtype)
            x = x + self.noise_std * noise
        if self.drop_prob:
            keep = torch.rand(x.shape, generator=generator, device=x.device) >= self.drop_prob
            x = x * keep
        return x
