"""Batch-level random augmentation of images, in torch (for the two NT-Xent views)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor


class ImageAugment:
    """Random crop after zero padding, optional horizontal flip, small gaussian noise.

    Each sample of the batch gets its own crop offset, flip and noise. Flipping is off
    for digit and letter data (digits, MNIST, EMNIST), where a mirrored glyph is not the
    same class; on for natural images (CIFAR, Fashion-MNIST, photo folders).
    """

    def __init__(self, padding: int = 2, flip: bool = False, noise_std: float = 0.05) -> None:
        if padding < 0:
            raise ValueError(f"padding: {padding} must be >= 0")
        if noise_std < 0:
            raise ValueError(f"noise_std: {noise_std} must be >= 0")
        self.padding = padding
        self.flip = flip
        self.noise_std = noise_std

    def __repr__(self) -> str:
        return f"ImageAugment(padding={self.padding}, flip={self.flip}, noise_std={self.noise_std})"

    def __call__(self, x: Tensor, generator: torch.Generator | None = None) -> Tensor:
        """``x``: images (N, C, H, W), float. Returns an augmented batch of the same shape."""
        if x.dim() != 4:
            raise ValueError(f"x: expected images (N, C, H, W), got shape {tuple(x.shape)}")
        n, _, h, w = x.shape
        device = x.device
        if self.padding:
            p = self.padding
            padded = F.pad(x, (p, p, p, p))
            top = torch.randint(0, 2 * p + 1, (n,), generator=generator, device=device)
            left = torch.randint(0, 2 * p + 1, (n,), generator=generator, device=device)
            rows = (top[:, None] + torch.arange(h, device=device))[:, :, None]  # (N, H, 1)
            cols = (left[:, None] + torch.arange(w, device=device))[:, None, :]  # (N, 1, W)
            batch = torch.arange(n, device=device)[:, None, None]
            # Advanced indexing around the channel slice gives (N, H, W, C).
            x = padded.permute(0, 2, 3, 1)[batch, rows, cols].permute(0, 3, 1, 2)
        if self.flip:
            flip = torch.rand(n, generator=generator, device=device) < 0.5
            x = torch.where(flip[:, None, None, None], x.flip(-1), x)
        if self.noise_std:
            noise = torch.randn(x.shape, generator=generator, device=device, dtype=x.dtype)
            x = x + self.noise_std * noise
        return x.contiguous()
