"""Per-iteration geometry diagnostics of a batch of embeddings (SCIENCE.md §6).

Everything here runs under ``torch.no_grad`` on the training device and returns
0-dim tensors; ``StepStatistics.to_host`` stacks them into one tensor and moves it to
the CPU once per logged step (one device sync, not one per statistic).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

_EPS = 1e-12
_QUANTILES = (0.05, 0.5, 0.95)


@torch.no_grad()
def norm_statistics(norms: torch.Tensor) -> dict[str, torch.Tensor]:
    """Statistics of the L2 norms (one per sample) of a batch of raw embeddings.

    ``norm/var`` is the population variance (divide by N), as the SEC paper reports it.
    """
    mean = norms.mean()
    var = norms.var(correction=0)
    std = var.sqrt()
    quantiles = torch.quantile(norms.float(), torch.tensor(_QUANTILES, device=norms.device))
    return {
        "norm/mean": mean,
        "norm/var": var,
        "norm/std": std,
        "norm/cv": std / mean.clamp_min(_EPS),
        "norm/min": norms.min(),
        "norm/max": norms.max(),
        "norm/p05": quantiles[0],
        "norm/p50": quantiles[1],
        "norm/p95": quantiles[2],
    }


@torch.no_grad()
def pair_cosines(directions: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
    """Mean cosine of positive (same label, i ≠ j) and negative pairs, and their gap.

    ``directions``: N × d unit rows. A batch without positives (or negatives) yields NaN
    for that entry, which the store keeps as a gap in the series.
    """
    cosine = directions @ directions.T
    same = labels[:, None] == labels[None, :]
    not_self = ~torch.eye(len(labels), dtype=torch.bool, device=labels.device)
    positive = same & not_self
    negative = ~same
    nan = torch.tensor(float("nan"), device=cosine.device)
    pos = (cosine * positive).sum() / positive.sum() if positive.any() else nan
    neg = (cosine * negative).sum() / negative.sum() if negative.any() else nan
    return {"cos/pos": pos, "cos/neg": neg, "cos/gap": pos - neg}


def _pearson(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    a = a - a.mean()
    b = b - b.mean()
    return (a * b).sum() / (a.norm() * b.norm()).clamp_min(_EPS)


@torch.no_grad()
def gradient_statistics(
    embeddings: torch.Tensor, norms: torch.Tensor, grad: torch.Tensor
) -> dict[str, torch.Tensor]:
    """Gradient diagnostics on the embedding (SCIENCE.md §1 and §6).

    - ``grad/norm_inv_corr``: Pearson correlation of ||∂L/∂f_i|| with 1/||f_i||
      (strongly positive for losses on normalised embeddings without SEC);
    - ``grad/radial_cos``: mean |cos(∂L/∂f_i, f_i)| (≈ 0 when the loss only sees
      directions: the gradient rotates f_i and does not stretch it);
    - ``grad/rotation_ratio``: the rotation each sample is pushed by, ||g_⊥||/||f||,
      averaged over the small-norm half of the batch divided by the large-norm half
      (the "unbalanced update" SEC claims to fix; ≈ 1 means balanced);
    - ``grad/norm_mean``: mean ||∂L/∂f_i||.
    Samples with a zero gradient (inactive in the loss) are left out of the cosine.
    """
    grad_norms = grad.norm(dim=1)
    directions = embeddings / norms[:, None].clamp_min(_EPS)
    radial = (grad * directions).sum(dim=1)
    active = grad_norms > _EPS
    radial_cos = (radial.abs() / grad_norms.clamp_min(_EPS))[active]
    tangential = (grad - radial[:, None] * directions).norm(dim=1)
    rotation = tangential / norms.clamp_min(_EPS)
    order = torch.argsort(norms)
    half = len(order) // 2
    small, large = rotation[order[:half]], rotation[order[len(order) - half :]]
    nan = torch.tensor(float("nan"), device=grad.device)
    return {
        "grad/norm_mean": grad_norms.mean(),
        "grad/norm_inv_corr": _pearson(grad_norms, 1.0 / norms.clamp_min(_EPS)),
        "grad/radial_cos": radial_cos.mean() if radial_cos.numel() else nan,
        "grad/rotation_ratio": small.mean() / large.mean().clamp_min(_EPS) if half else nan,
    }


@dataclass
class DirectionTracker:
    """Follows a fixed set of training samples: their norms and how far they turn.

    ``update(embeddings)`` takes the current raw embeddings of the tracked samples
    (M × d) and returns their norms, the mean angle (degrees) each turned since the
    previous call, and the ratio of that angle in the small-norm half over the
    large-norm half (halves by the norm at the previous call).
    """

    previous: torch.Tensor | None = field(default=None)

    @torch.no_grad()
    def update(self, embeddings: torch.Tensor) -> dict[str, torch.Tensor]:
        norms = embeddings.norm(dim=1)
        directions = embeddings / norms[:, None].clamp_min(_EPS)
        nan = torch.tensor(float("nan"), device=embeddings.device)
        result = {"direction/angle_mean": nan, "direction/update_ratio": nan}
        if self.previous is not None:
            previous_norms, previous_directions = self.previous
            cosine = (directions * previous_directions).sum(dim=1).clamp(-1.0, 1.0)
            angles = torch.rad2deg(torch.acos(cosine))
            order = torch.argsort(previous_norms)
            half = len(order) // 2
            result["direction/angle_mean"] = angles.mean()
            if half:
                small = angles[order[:half]].mean()
                large = angles[order[len(order) - half :]].mean()
                result["direction/update_ratio"] = small / large.clamp_min(_EPS)
        self.previous = (norms, directions)
        result["_sample_norms"] = norms
        return result


@dataclass
class StepStatistics:
    """Collects a step's statistics as tensors and moves them to the host at once."""

    scalars: dict[str, torch.Tensor] = field(default_factory=dict)
    sample_norms: torch.Tensor | None = None

    def add(self, values: dict[str, torch.Tensor]) -> None:
        for name, value in values.items():
            if name == "_sample_norms":
                self.sample_norms = value
            else:
                self.scalars[name] = value.detach().reshape(())

    def to_host(self) -> tuple[dict[str, float], list[float]]:
        """One device → host transfer for everything (this is the step's sync point)."""
        names = list(self.scalars)
        parts = [torch.stack([self.scalars[n].float() for n in names])] if names else []
        if self.sample_norms is not None:
            parts.append(self.sample_norms.float().reshape(-1))
        if not parts:
            return {}, []
        flat = torch.cat(parts).cpu().tolist()
        values = dict(zip(names, flat[: len(names)], strict=True))
        return values, flat[len(names) :]


def batch_statistics(
    embeddings: torch.Tensor, labels: torch.Tensor, grad: torch.Tensor | None
) -> dict[str, torch.Tensor]:
    """All per-batch geometry statistics of raw embeddings (N × d) with labels (N)."""
    with torch.no_grad():
        embeddings = embeddings.detach().float()
        norms = embeddings.norm(dim=1)
        stats = norm_statistics(norms)
        stats.update(pair_cosines(F.normalize(embeddings, dim=1), labels))
        if grad is not None:
            stats.update(gradient_statistics(embeddings, norms, grad.float()))
    return stats


def degrees(radians: float) -> float:
    return radians * 180.0 / math.pi
