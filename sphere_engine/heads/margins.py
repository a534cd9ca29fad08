"""Target-logit margins shared by the angular heads (all angles in radians).

Each function takes the cosines of the targets, shape (N,), and returns the
margin-adjusted target values, shape (N,); ``replace_target`` writes them back into
the (N, K) cosine matrix.
"""

from __future__ import annotations

import math

import torch


def replace_target(
    cosine: torch.Tensor, labels: torch.Tensor, target: torch.Tensor
) -> torch.Tensor:
    """Copy of ``cosine`` (N × K) with column ``labels[i]`` of row i set to ``target[i]``."""
    return cosine.scatter(1, labels.unsqueeze(1), target.unsqueeze(1).to(cosine.dtype))


def target_cosine(cosine: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """The target column of each row of ``cosine`` (N × K), shape (N,)."""
    return cosine.gather(1, labels.unsqueeze(1)).squeeze(1)


def additive_angular_margin(cos_target: torch.Tensor, margin: float) -> torch.Tensor:
    """ArcFace: cos(θ + m), with the usual fallback cos θ − m·sin m where θ + m > π.

    Past θ = π − m, cos(θ + m) would increase again with θ (no longer a penalty), so
    the target switches to the linear fallback cos θ − m·sin m, which stays monotonic
    in θ (as in insightface's ``easy_margin=False``).
    """
    # sin θ ≥ 0 since θ ∈ [0, π]; the clamp keeps the sqrt's gradient finite at |cos| = 1.
    sin_target = (1.0 - cos_target * cos_target).clamp(min=1e-12).sqrt()
    shifted = cos_target * math.cos(margin) - sin_target * math.sin(margin)
    fallback = cos_target - margin * math.sin(margin)
    return torch.where(cos_target > math.cos(math.pi - margin), shifted, fallback)


def additive_cosine_margin(cos_target: torch.Tensor, margin: float) -> torch.Tensor:
    """CosFace: cos θ − m."""
    return cos_target - margin


def multiplicative_angular_margin(cos_target: torch.Tensor, margin: int) -> torch.Tensor:
    """SphereFace: ψ(θ) = (−1)^k cos(mθ) − 2k for θ ∈ [kπ/m, (k+1)π/m], k = 0 … m−1.

    ψ is monotonically decreasing on [0, π] (ψ(0) = 1, ψ(π) = 1 − 2m), unlike cos(mθ).
    """
    # acos has an infinite slope at ±1; the clamp keeps gradients finite.
    eps = 1e-7 if cos_target.dtype == torch.float64 else 1e-6
    theta = torch.acos(cos_target.clamp(-1.0 + eps, 1.0 - eps))
    k = torch.floor(theta * margin / math.pi).clamp(max=margin - 1).detach()
    sign = 1.0 - 2.0 * torch.remainder(k, 2.0)  # (−1)^k
    return sign * torch.cos(margin * theta) - 2.0 * k
