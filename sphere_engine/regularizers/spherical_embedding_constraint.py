"""``SphericalEmbeddingConstraint`` (SEC; Zhang et al., NeurIPS 2020)."""

from __future__ import annotations

from typing import ClassVar

import torch

from sphere_engine.config.option_checks import check_option
from sphere_engine.regularizers.base_regularizer import BaseRegularizer
from sphere_engine.regularizers.norm_deviation import radii, squared_deviation
from sphere_engine.regularizers.registry import REGULARIZERS


@REGULARIZERS.register("sec")
class SphericalEmbeddingConstraint(BaseRegularizer):
    """L_sec = (1/N) Σ_i (||f_i|| − μ)², μ a detached target norm.

    Target convention (EMA with momentum ρ weighting the *new* batch):
      μ_t = ρ · μ_batch,t + (1 − ρ) · μ_{t−1},   μ_1 = μ_batch,1,
    where μ_batch is the batch mean norm. ρ = 1 (default) is the plain batch mean, for
    which detaching μ changes nothing (Σ_i (||f_i|| − μ) = 0). μ is updated only in
    training mode; in eval mode the stored μ is used (the batch mean before any update).
    Diagnostics: ``sec/mu_batch`` and ``sec/mu_ema`` (the target used).
    """

    param_help: ClassVar[dict[str, str]] = {
        "momentum": "ρ in (0, 1]: weight of the current batch's mean norm in the target "
        "μ ← ρ·μ_batch + (1−ρ)·μ; 1 = batch mean",
    }

    def __init__(self, embedding_dim: int, num_classes: int, *, momentum: float = 1.0) -> None:
        super().__init__(embedding_dim, num_classes)
        self.momentum = check_option("momentum", momentum, low=0, high=1, low_open=True)
        self.register_buffer("mu_ema", torch.zeros(()))
        self.register_buffer("ema_initialised", torch.zeros((), dtype=torch.bool))

    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        norms = radii(embeddings, centre="origin", power=1)  # N
        mu_batch = norms.detach().mean()
        mu = self._target(mu_batch)
        self._diagnostics = {"sec/mu_batch": mu_batch, "sec/mu_ema": mu.detach().clone()}
        return squared_deviation(norms, mu.to(norms.dtype))

    def _target(self, mu_batch: torch.Tensor) -> torch.Tensor:
        # torch.where rather than ``if initialised``: no host-device sync per step.
        previous = self.mu_ema.to(mu_batch.dtype)
        if not self.training:
            return torch.where(self.ema_initialised, previous, mu_batch)
        blended = self.momentum * mu_batch + (1 - self.momentum) * previous
        mu = torch.where(self.ema_initialised, blended, mu_batch)
        self.mu_ema.copy_(mu)
        self.ema_initialised.fill_(True)
        return mu
