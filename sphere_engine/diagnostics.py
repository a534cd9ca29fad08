"""Per-iteration geometry diagnostics of a batch of embeddings (SCIENCE.md §6).

Everything here runs under ``torch.no_grad`` on the training device. Each group of
statistics is computed as ONE small vector (``PackedStatistics``, a read-only mapping
from name to 0-dim tensor) and ``StepStatistics.to_host`` concatenates the groups and
moves them to the CPU once per logged step (one device sync, not one per statistic).

This runs every training step, so it is written for few tensor operations: on a CPU
each op costs microseconds of dispatch, and a tiny matmul may wake the BLAS thread
pool (milliseconds on a loaded machine). Constants (percentile positions, index
vectors, NaN) are cached per batch size and device instead of rebuilt every step.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Mapping

import torch

from sphere_engine.catalogue import norm_histogram as hist

_EPS = 1e-12
_STILL_DEGREES = 1e-6  # below this mean turn the tracked samples did not move
_QUANTILES = (0.05, 0.5, 0.95)

NORM_NAMES = (
    "norm/mean",
    "norm/var",
    "norm/std",
    "norm/cv",
    "norm/min",
    "norm/max",
    "norm/p05",
    "norm/p50",
    "norm/p95",
)
PAIR_NAMES = ("cos/pos", "cos/neg", "cos/gap")
GRADIENT_NAMES = ("grad/norm_mean", "grad/norm_inv_corr", "grad/radial_cos", "grad/rotation_ratio")
DIRECTION_NAMES = ("direction/angle_mean", "direction/update_ratio")
# Packed as bin counts; ``StepStatistics.to_host`` turns them into batch fractions.
HISTOGRAM_NAMES = tuple(hist.bin_key(i) for i in range(hist.BINS))


class PackedStatistics(Mapping[str, torch.Tensor]):
    """Named statistics held in one 1-D tensor (``values[i]`` is ``names[i]``)."""

    def __init__(self, names: tuple[str, ...], values: torch.Tensor) -> None:
        if values.shape != (len(names),):
            raise ValueError(f"values must have shape ({len(names)},), got {tuple(values.shape)}")
        self.names = names
        self.values = values

    def __getitem__(self, name: str) -> torch.Tensor:
        return self.values[self.names.index(name)]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


@functools.lru_cache(maxsize=32)  # one batch size per run: built once, not every step
def _quantile_table(
    count: int, device: torch.device, dtype: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor]:
    """Positions in the sorted norms of [min, max, 3 × below, 3 × above] and the
    interpolation weights of the 5/50/95th percentiles (linear, as ``torch.quantile``)."""
    low, high, weight = [], [], []
    for q in _QUANTILES:
        position = q * (count - 1)
        below = math.floor(position)
        low.append(below)
        high.append(min(below + 1, count - 1))
        weight.append(position - below)
    picks = torch.tensor([0, count - 1, *low, *high], device=device)
    return picks, torch.tensor(weight, dtype=dtype, device=device)


@functools.lru_cache(maxsize=32)
def _pair_constants(
    count: int, device: torch.device, dtype: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """[N, N²], the gather indices that turn [same, total, same_pairs, N, N²] into
    [positive sum, negative sum, positive pairs, negative pairs], and a NaN."""
    counts = torch.tensor([count, count * count], dtype=dtype, device=device)
    minuend = torch.tensor([0, 1, 2, 4], device=device)  # same, total, same_pairs, N²
    subtrahend = torch.tensor([3, 0, 3, 2], device=device)  # N, same, N, same_pairs
    return counts, minuend, subtrahend, torch.tensor(float("nan"), dtype=dtype, device=device)


@functools.lru_cache(maxsize=8)
def _nan(device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    return torch.tensor(float("nan"), dtype=dtype, device=device)


@torch.no_grad()
def _norm_vector(norms: torch.Tensor, sorted_norms: torch.Tensor) -> torch.Tensor:
    var, mean = torch.var_mean(norms, correction=0)
    std = var.sqrt()
    picks, weights = _quantile_table(len(norms), norms.device, norms.dtype)
    picked = sorted_norms[picks]  # min, max, 3 below, 3 above: one gather
    quantiles = torch.lerp(picked[2:5], picked[5:8], weights)
    moments = torch.stack((mean, var, std, std / mean.clamp_min(_EPS)))
    return torch.cat((moments, picked[:2], quantiles))


@torch.no_grad()
def norm_statistics(
    norms: torch.Tensor, sorted_norms: torch.Tensor | None = None
) -> PackedStatistics:
    """Statistics of the L2 norms (one per sample) of a batch of raw embeddings.

    ``norm/var`` is the population variance (divide by N), as the SEC paper reports it.
    Percentiles come from one sort, not ``torch.quantile``.
    """
    if sorted_norms is None:
        sorted_norms = norms.sort().values
    return PackedStatistics(NORM_NAMES, _norm_vector(norms, sorted_norms))


@torch.no_grad()
def _pair_vector(directions: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    count, dtype = len(labels), directions.dtype
    classes = int(labels.max()) + 1  # the sync ``F.one_hot`` would do as well
    # per-class sums by scatter-add, not one_hot.T @ directions: a tiny matmul wakes
    # the BLAS thread pool, which costs milliseconds on a busy CPU
    class_sums = directions.new_zeros(classes, directions.shape[1]).index_add_(
        0, labels, directions
    )
    class_sizes = torch.bincount(labels, minlength=classes).to(dtype)
    counts, minuend, subtrahend, nan = _pair_constants(count, directions.device, dtype)
    sums = torch.cat(
        (
            torch.stack(
                (
                    class_sums.square().sum(),  # Σ over same-class pairs incl. self-pairs
                    class_sums.sum(dim=0).square().sum(),  # Σ over all pairs
                    class_sizes.square().sum(),  # number of same-class pairs
                )
            ),
            counts,
        )
    )
    differences = sums[minuend] - sums[subtrahend]  # pos sum, neg sum, pos pairs, neg pairs
    pairs = differences[2:]
    cosines = torch.where(pairs > 0, differences[:2] / pairs.clamp_min(1), nan)
    return torch.cat((cosines, cosines[:1] - cosines[1:]))


@torch.no_grad()
def pair_cosines(directions: torch.Tensor, labels: torch.Tensor) -> PackedStatistics:
    """Mean cosine of positive (same label, i ≠ j) and negative pairs, and their gap.

    ``directions``: N × d unit rows. Computed from per-class sums of directions in
    O(N·d), without the N × N matrix: Σ_{i,j same class} cos = Σ_c ||Σ_{i∈c} f̂_i||²
    (the N self-pairs contribute exactly 1 each). A batch without positives (or
    negatives) yields NaN for that entry, kept as a gap in the series.
    """
    return PackedStatistics(PAIR_NAMES, _pair_vector(directions, labels))


@torch.no_grad()
def _gradient_vector(
    embeddings: torch.Tensor, norms: torch.Tensor, grad: torch.Tensor, norm_order: torch.Tensor
) -> torch.Tensor:
    safe_norms = norms.clamp_min(_EPS)
    grad_norms = torch.linalg.vector_norm(grad, dim=1)
    radial = torch.linalg.vecdot(grad, embeddings) / safe_norms  # <g, f̂>
    active = (grad_norms > _EPS).to(grad.dtype)
    radial_cos = (radial.abs() / grad_norms.clamp_min(_EPS) * active).sum() / active.sum()
    rotation = (grad_norms.square() - radial.square()).clamp_min(0).sqrt() / safe_norms
    half = len(norm_order) // 2
    by_norm = rotation[norm_order]
    small = by_norm[:half].mean()
    large = by_norm[len(norm_order) - half :].mean()
    grad_mean = grad_norms.mean()
    centred_grad = grad_norms - grad_mean
    inverse = safe_norms.reciprocal()
    centred_inverse = inverse - inverse.mean()
    correlation = (centred_grad * centred_inverse).sum() / (
        centred_grad.norm() * centred_inverse.norm()
    ).clamp_min(_EPS)
    # zero gradient on the large-norm half (inactive loss): no ratio to report
    ratio = torch.where(
        large > _EPS, small / large.clamp_min(_EPS), _nan(large.device, large.dtype)
    )
    return torch.stack((grad_mean, correlation, radial_cos, ratio))


@torch.no_grad()
def gradient_statistics(
    embeddings: torch.Tensor,
    norms: torch.Tensor,
    grad: torch.Tensor,
    norm_order: torch.Tensor | None = None,
) -> PackedStatistics:
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
    return PackedStatistics(GRADIENT_NAMES, _gradient_vector(embeddings, norms, grad, norm_order))


class DirectionTracker:
    """Follows a fixed set of training samples: their norms and how far they turn.

    ``update(embeddings)`` takes the current raw embeddings of the tracked samples
    (M × d) and returns their norms, the mean angle (degrees) each turned since the
    previous call, and the ratio of that angle in the small-norm half over the
    large-norm half (halves by the norm at the previous call).
    """

    def __init__(self) -> None:
        self.previous: tuple[torch.Tensor, torch.Tensor] | None = None

    @torch.no_grad()
    def update(self, embeddings: torch.Tensor) -> PackedStatistics:
        embeddings = embeddings.detach()
        norms = torch.linalg.vector_norm(embeddings, dim=1)
        directions = embeddings / norms[:, None].clamp_min(_EPS)
        previous, self.previous = self.previous, (norms, directions)
        nan = _nan(embeddings.device, embeddings.dtype)
        if previous is None:
            return PackedStatistics(DIRECTION_NAMES, nan.expand(2))
        previous_norms, previous_directions = previous
        # 2·atan2(|u − v|, |u + v|) is exact for tiny angles, where acos(u·v) in
        # float32 cannot resolve anything below ~0.02°.
        gap = torch.linalg.vector_norm(directions - previous_directions, dim=1)
        total = torch.linalg.vector_norm(directions + previous_directions, dim=1)
        angles = torch.rad2deg(2 * torch.atan2(gap, total))
        half = len(angles) // 2
        if not half:
            return PackedStatistics(DIRECTION_NAMES, torch.stack((angles.mean(), nan)))
        by_norm = angles[torch.argsort(previous_norms)]
        small = by_norm[:half].mean()
        large = by_norm[len(angles) - half :].mean()
        # no movement at all (e.g. a step with zero loss): a ratio means nothing
        ratio = torch.where(large > _STILL_DEGREES, small / large.clamp_min(_EPS), nan)
        return PackedStatistics(DIRECTION_NAMES, torch.stack((angles.mean(), ratio)))

    @property
    def norms(self) -> torch.Tensor:
        """The norms (M) of the tracked samples at the last ``update``."""
        if self.previous is None:
            raise ValueError("DirectionTracker.norms: update() has not been called yet")
        return self.previous[0]


class StepStatistics:
    """Collects a step's statistics as tensors and moves them to the host at once.

    Packed groups are kept as they are (one tensor per group); single values are
    reshaped to length 1; ``to_host`` concatenates everything and syncs once.
    """

    def __init__(self) -> None:
        self.names: list[str] = []
        self.blocks: list[torch.Tensor] = []
        self.sample_norms: torch.Tensor | None = None

    def add(self, values: Mapping[str, torch.Tensor]) -> None:
        if isinstance(values, PackedStatistics):
            self.names.extend(values.names)
            self.blocks.append(values.values)
            return
        for name, value in values.items():
            self.names.append(name)
            self.blocks.append(value.detach().reshape(1))

    def to_host(self) -> tuple[dict[str, float], list[float]]:
        """One device → host transfer for everything (this is the step's sync point).
        A name added twice keeps its last value, as a dict would."""
        parts = list(self.blocks)
        if self.sample_norms is not None:
            parts.append(self.sample_norms.detach().reshape(-1))
        if not parts:
            return {}, []
        # cat promotes mixed dtypes; .float() then rounds every value to float32 as before
        flat = torch.cat(parts).float().cpu().tolist()
        count = len(self.names)
        values = dict(zip(self.names, flat[:count], strict=True))
        return _with_histogram_fractions(values), flat[count:]


def _with_histogram_fractions(values: dict[str, float]) -> dict[str, float]:
    """The histogram's bin counts (packed as ``norm_hist/<bin>``) become the fraction of
    the batch in each bin; empty bins are dropped (a batch fills a handful)."""
    counts = {k: v for k, v in values.items() if k.startswith(hist.PREFIX)}
    if not counts:
        return values
    total = sum(counts.values())
    scalars = {k: v for k, v in values.items() if not k.startswith(hist.PREFIX)}
    if total:
        scalars.update({k: c / total for k, c in counts.items() if c})
    return scalars


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


@torch.no_grad()
def batch_statistics(
    embeddings: torch.Tensor, labels: torch.Tensor, grad: torch.Tensor | None
) -> PackedStatistics:
    """All per-batch geometry statistics of raw embeddings (N × d) with labels (N):
    norm statistics, pair cosines and, given ``grad`` (∂L/∂embeddings), the gradient
    statistics, as one packed vector (the norm histogram's bin counts included)."""
    embeddings = embeddings.detach().float()
    norms = torch.linalg.vector_norm(embeddings, dim=1)
    sorted_norms, order = norms.sort()
    directions = embeddings / norms.clamp_min(_EPS)[:, None]
    parts = [
        _norm_vector(norms, sorted_norms),
        norm_histogram(norms),
        _pair_vector(directions, labels),
    ]
    names = NORM_NAMES + HISTOGRAM_NAMES + PAIR_NAMES
    if grad is not None:
        parts.append(_gradient_vector(embeddings, norms, grad.detach().float(), order))
        names += GRADIENT_NAMES
    return PackedStatistics(names, torch.cat(parts))
