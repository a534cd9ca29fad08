"""Per-iteration geometry diagnostics of a batch of embeddings (SCIENCE.md §6).

Everything here runs under ``torch.no_grad`` on the training device and returns
0-dim tensors; ``StepStatistics.to_host`` stacks them into one tensor and moves it to
the CPU once per logged step (one device sync, not one per statistic).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from sphere_engine.catalogue import norm_histogram as hist

_EPS = 1e-12
_STILL_DEGREES = 1e-6  # below this mean turn the tracked samples did not move
_QUANTILES = (0.05, 0.5, 0.95)
#: The key under which ``batch_statistics`` hands the histogram's bin counts (a vector,
#: not a scalar) to ``StepStatistics``; it is logged as ``norm_hist/<bin>`` fractions.
NORM_HISTOGRAM = "norm_hist"


@functools.lru_cache(maxsize=16)  # one batch size per run: computed once, not every step
def _quantile_positions(count: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[float, ...]]:
    """Indices and weights that interpolate the 5/50/95th percentiles of ``count``
    sorted values (linear interpolation, as ``torch.quantile``)."""
    low, high, weight = [], [], []
    for q in _QUANTILES:
        position = q * (count - 1)
        below = math.floor(position)
        low.append(below)
        high.append(min(below + 1, count - 1))
        weight.append(position - below)
    return tuple(low), tuple(high), tuple(weight)


@torch.no_grad()
def norm_statistics(
    norms: torch.Tensor, sorted_norms: torch.Tensor | None = None
) -> dict[str, torch.Tensor]:
    """Statistics of the L2 norms (one per sample) of a batch of raw embeddings.

    ``norm/var`` is the population variance (divide by N), as the SEC paper reports it.
    Few tensor ops on purpose: this runs every step, and on a CPU each op costs
    microseconds of overhead (percentiles from one sort, not ``torch.quantile``).
    """
    if sorted_norms is None:
        sorted_norms = norms.sort().values
    var, mean = torch.var_mean(norms, correction=0)
    std = var.sqrt()
    low, high, weight = _quantile_positions(len(norms))
    w = torch.tensor(weight, dtype=norms.dtype, device=norms.device)
    # lists, not tuples: a tuple index would address several dimensions
    quantiles = sorted_norms[list(low)] * (1 - w) + sorted_norms[list(high)] * w
    return {
        "norm/mean": mean,
        "norm/var": var,
        "norm/std": std,
        "norm/cv": std / mean.clamp_min(_EPS),
        "norm/min": sorted_norms[0],
        "norm/max": sorted_norms[-1],
        "norm/p05": quantiles[0],
        "norm/p50": quantiles[1],
        "norm/p95": quantiles[2],
    }


@torch.no_grad()
def pair_cosines(directions: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
    """Mean cosine of positive (same label, i ≠ j) and negative pairs, and their gap.

    ``directions``: N × d unit rows. Computed from per-class sums of directions in
    O(N·d), without the N × N matrix: Σ_{i,j same class} cos = Σ_c ||Σ_{i∈c} f̂_i||²
    (the N self-pairs contribute exactly 1 each). A batch without positives (or
    negatives) yields NaN for that entry, kept as a gap in the series.
    """
    count = len(labels)
    one_hot = F.one_hot(labels).to(directions.dtype)  # N × C
    class_sums = one_hot.T @ directions  # C × d
    class_sizes = one_hot.sum(dim=0)
    same = (class_sums * class_sums).sum()
    total = directions.sum(dim=0).square().sum()
    same_pairs = class_sizes.square().sum()
    positive_pairs = same_pairs - count
    negative_pairs = count * count - same_pairs
    nan = torch.full((), float("nan"), device=directions.device)
    pos = torch.where(positive_pairs > 0, (same - count) / positive_pairs.clamp_min(1), nan)
    neg = torch.where(negative_pairs > 0, (total - same) / negative_pairs.clamp_min(1), nan)
    return {"cos/pos": pos, "cos/neg": neg, "cos/gap": pos - neg}


@torch.no_grad()
def gradient_statistics(
    embeddings: torch.Tensor,
    norms: torch.Tensor,
    grad: torch.Tensor,
    norm_order: torch.Tensor | None = None,
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
    ``norm_order``: argsort of ``norms`` when the caller already has it.
    """
    if norm_order is None:
        norm_order = torch.argsort(norms)
    safe_norms = norms.clamp_min(_EPS)
    grad_norms = grad.norm(dim=1)
    radial = (grad * embeddings).sum(dim=1) / safe_norms  # <g, f̂>
    active = (grad_norms > _EPS).to(grad.dtype)
    radial_cos = (radial.abs() / grad_norms.clamp_min(_EPS) * active).sum() / active.sum()
    rotation = (grad_norms.square() - radial.square()).clamp_min(0).sqrt() / safe_norms
    half = len(norm_order) // 2
    small = rotation[norm_order[:half]].mean()
    large = rotation[norm_order[len(norm_order) - half :]].mean()
    centred_grad = grad_norms - grad_norms.mean()
    inverse = 1.0 / safe_norms
    centred_inverse = inverse - inverse.mean()
    correlation = (centred_grad * centred_inverse).sum() / (
        centred_grad.norm() * centred_inverse.norm()
    ).clamp_min(_EPS)
    return {
        "grad/norm_mean": grad_norms.mean(),
        "grad/norm_inv_corr": correlation,
        "grad/radial_cos": radial_cos,
        # zero gradient on the large-norm half (inactive loss): no ratio to report
        "grad/rotation_ratio": torch.where(
            large > _EPS, small / large.clamp_min(_EPS), torch.full_like(large, float("nan"))
        ),
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
            # 2·atan2(|u − v|, |u + v|) is exact for tiny angles, where acos(u·v) in
            # float32 cannot resolve anything below ~0.02°.
            gap = (directions - previous_directions).norm(dim=1)
            total = (directions + previous_directions).norm(dim=1)
            angles = torch.rad2deg(2 * torch.atan2(gap, total))
            order = torch.argsort(previous_norms)
            half = len(order) // 2
            result["direction/angle_mean"] = angles.mean()
            if half:
                small = angles[order[:half]].mean()
                large = angles[order[len(order) - half :]].mean()
                # no movement at all (e.g. a step with zero loss): a ratio means nothing
                result["direction/update_ratio"] = torch.where(
                    large > _STILL_DEGREES, small / large.clamp_min(_EPS), nan
                )
        self.previous = (norms, directions)
        return result

    @property
    def norms(self) -> torch.Tensor:
        """The norms (M) of the tracked samples at the last ``update``."""
        if self.previous is None:
            raise ValueError("DirectionTracker.norms: update() has not been called yet")
        return self.previous[0]


@dataclass
class StepStatistics:
    """Collects a step's statistics as tensors and moves them to the host at once."""

    scalars: dict[str, torch.Tensor] = field(default_factory=dict)
    sample_norms: torch.Tensor | None = None
    histogram: torch.Tensor | None = None  # bin counts of the norms (norm_histogram)

    def add(self, values: dict[str, torch.Tensor]) -> None:
        for name, value in values.items():
            if name == NORM_HISTOGRAM:
                self.histogram = value.detach()
            else:
                self.scalars[name] = value.detach().reshape(())

    def to_host(self) -> tuple[dict[str, float], list[float]]:
        """One device → host transfer for everything (this is the step's sync point)."""
        names = list(self.scalars)
        parts = [torch.stack([self.scalars[n].float() for n in names])] if names else []
        bins = 0
        if self.histogram is not None:  # rides along in the same transfer
            parts.append(self.histogram.float().reshape(-1))
            bins = self.histogram.numel()
        if self.sample_norms is not None:
            parts.append(self.sample_norms.float().reshape(-1))
        if not parts:
            return {}, []
        flat = torch.cat(parts).cpu().tolist()
        values = dict(zip(names, flat[: len(names)], strict=True))
        values.update(_histogram_fractions(flat[len(names) : len(names) + bins]))
        return values, flat[len(names) + bins :]


def _histogram_fractions(counts: list[float]) -> dict[str, float]:
    """``norm_hist/<bin>`` → fraction of the batch, for the non-empty bins only."""
    total = sum(counts)
    if not total:
        return {}
    return {hist.bin_key(i): c / total for i, c in enumerate(counts) if c}


@torch.no_grad()
def norm_histogram(norms: torch.Tensor) -> torch.Tensor:
    """Counts of the norms in the catalogue's fixed log-spaced bins (``hist.BINS``;
    out-of-range norms land in the end bins, non-finite ones are not counted: a
    diverging step must still reach the divergence check). A few tensor ops."""
    finite = torch.isfinite(norms)
    position = (norms.clamp_min(_EPS).log10() - hist.LOW_EXPONENT) * hist.BINS_PER_DECADE
    position = torch.where(finite, position, torch.zeros_like(position))
    index = position.floor().clamp(0, hist.BINS - 1).long()
    return torch.bincount(index, weights=finite.to(norms.dtype), minlength=hist.BINS)


def batch_statistics(
    embeddings: torch.Tensor, labels: torch.Tensor, grad: torch.Tensor | None
) -> dict[str, torch.Tensor]:
    """All per-batch geometry statistics of raw embeddings (N × d) with labels (N)."""
    with torch.no_grad():
        embeddings = embeddings.detach().float()
        norms = embeddings.norm(dim=1)
        sorted_norms, order = norms.sort()
        stats = norm_statistics(norms, sorted_norms)
        stats[NORM_HISTOGRAM] = norm_histogram(norms)
        stats.update(pair_cosines(embeddings / norms.clamp_min(_EPS)[:, None], labels))
        if grad is not None:
            stats.update(gradient_statistics(embeddings, norms, grad.float(), order))
    return stats
