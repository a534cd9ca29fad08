"""``IsotropicRegularizer``: features on a sphere around their batch mean."""

from __future__ import annotations

import torch

from sphere_engine.regularizers.base_regularizer import BaseRegularizer
from sphere_engine.regularizers.norm_deviation import radii, squared_deviation
from sphere_engine.regularizers.registry import REGULARIZERS


@REGULARIZERS.register("isotropic")
class IsotropicRegularizer(BaseRegularizer):
    """L = (1/N) Σ_i (||f_i − c||² − m)², c the batch mean, m the mean of ||f_j − c||².

    c stays in the graph (L is then translation invariant: its gradients sum to zero
    over the batch and it never drags the mean). m is detached, which changes nothing:
    ∂L/∂m = −(2/N) Σ_i (||f_i − c||² − m) = 0 exactly. Diagnostic ``isotropic/m``.
    """

    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        squared_radii = radii(embeddings, centre="batch_mean", power=2)  # N
        m = squared_radii.detach().mean()
        self._diagnostics = {"isotropic/m": m}
        return squared_deviation(squared_radii, m)
