"""Mixed precision of a run (``training.amp``): autocast for the forward and, for fp16
on CUDA, a gradient scaler around backward and the optimiser step.

Only the backbone runs in reduced precision: its embeddings are cast to float32 before
the objective, so the loss and every diagnostic are computed in float32.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import torch

from sphere_engine.config.config_error import ConfigError

_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


@dataclass
class Precision:
    device_type: str
    dtype: torch.dtype | None  # None: full float32
    scaler: torch.amp.GradScaler | None

    def autocast(self, cache_enabled: bool = True) -> contextlib.AbstractContextManager:
        """``cache_enabled=False`` inside a CUDA graph capture: a cast kept in autocast's
        cache would outlive the capture that made it."""
        if self.dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(self.device_type, dtype=self.dtype, cache_enabled=cache_enabled)

    def backward(self, loss: torch.Tensor) -> None:
        (self.scaler.scale(loss) if self.scaler else loss).backward()

    def unscaled(self, grad: torch.Tensor | None) -> torch.Tensor | None:
        """A gradient as it would be without the loss scale (for the diagnostics)."""
        if grad is None or self.scaler is None:
            return grad
        return grad / self.scaler._get_scale_async()

    def step(self, optimizer: torch.optim.Optimizer) -> None:
        if self.scaler is None:
            optimizer.step()
            return
        self.scaler.step(optimizer)  # skipped when the scaled gradients overflowed
        self.scaler.update()


def build_precision(amp: str, device: torch.device) -> Precision:
    """``training.amp`` on ``device``; fp16 without CUDA is a ``ValueError``."""
    if amp == "off":
        return Precision(device.type, None, None)
    if amp == "fp16" and device.type != "cuda":
        raise ConfigError(
            "training.amp",
            f"'fp16' needs a CUDA device (this run is on {device.type}); use 'bf16' or 'off'",
        )
    scaler = torch.amp.GradScaler("cuda") if amp == "fp16" else None
    return Precision(device.type, _DTYPES[amp], scaler)
