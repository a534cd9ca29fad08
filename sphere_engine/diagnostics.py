"""Per-iteration geometry diagnostics of a batch of embeddings (SCIENCE.md §6).

Everything here runs under ``torch.no_grad`` on the training device. Each group of
statistics is computed as ONE small vector of raw reductions (sums, norms, picked
order statistics) plus a ``finish`` function that turns those raw numbers into the
statistics (divisions, square roots, NaN for an empty half) in plain Python, after
``StepStatistics.to_host`` has concatenated the groups and moved them to the CPU once
per logged step (one device sync, not one per statistic). ``PackedStatistics`` is the
read-only mapping from name to value of one group.

This runs every training step, so it is written for few tensor operations: on a CPU
each op costs microseconds of dispatch (scalar arithmetic on 0-dim tensors costs as
much as on a whole batch), and a tiny matmul may wake the BLAS thread pool
(milliseconds on a loaded machine). Scalar arithmetic therefore happens on the host.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence

import torch

_EPS = 1e-12
_STILL_DEGREES = 1e-6  # below this mean turn the tracked samples did not move
_QUANTILES = (0.05, 0.5, 0.95)
_NAN = float("nan")

Finish = Callable[[Sequence[float]], list[float]]

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


class PackedStatistics(Mapping[str, torch.Tensor]):
    """Named statistics of one group: a 1-D tensor of raw values and the ``finish``
    function that maps them, on the host, to one value per name (``None``: the raw
    values are the statistics, ``values[i]`` is ``names[i]``). Reading an entry
    through the mapping finishes on the spot (a sync; the training loop does not)."""

    def __init__(
        self, names: tuple[str, ...], values: torch.Tensor, finish: Finish | None = None
    ) -> None:
        if finish is None and values.shape != (len(names),):
            raise ValueError(f"values must have shape ({len(names)},), got {tuple(values.shape)}")
        self.names = names
        self.values = values
        self.finish = finish

    def host_values(self, raw: Sequence[float]) -> list[float]:
        """One value per name from this group's raw values as read on the host."""
        return list(raw) if self.finish is None else self.finish(raw)

    def __getitem__(self, name: str) -> torch.Tensor:
        index = self.names.index(name)
        if self.finish is None:
            return self.values[index]
        finished = self.host_values(self.values.detach().double().cpu().tolist())
        return torch.tensor(finished[index], dtype=torch.float64)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


@functools.lru_cache(maxsize=32)  # one batch size per run: built once, not every step
def _quantile_table(count: int, device: torch.device) -> tuple[torch.Tensor, tuple[float, ...]]:
    """Positions in the sorted norms of [min, max, 3 × below, 3 × above] and the
    interpolation weights of the 5/50/95th percentiles (linear, as ``torch.quantile``)."""
    low, high, weight = [], [], []
    for q in _QUANTILES:
        position = q * (count - 1)
        below = math.floor(position)
        low.append(below)
        high.append(min(below + 1, count - 1))
        weight.append(position - below)
    return torch.tensor([0, count - 1, *low, *high], device=device), tuple(weight)


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator > 0 else _NAN


@torch.no_grad()
def _norm_raw(norms: torch.Tensor, sorted_norms: torch.Tensor) -> tuple[torch.Tensor, Finish]:
    """Raw [mean, var, min, max, 3 × below, 3 × above] of the norms, and its finish."""
    var, mean = torch.var_mean(norms, correction=0)
    picks, weights = _quantile_table(len(norms), norms.device)
    raw = torch.cat((torch.stack((mean, var)), sorted_norms[picks]))  # one gather

    def finish(values: Sequence[float]) -> list[float]:
        mean, var, low, high = values[0], values[1], values[2], values[3]
        std = math.sqrt(max(var, 0.0))
        quantiles = [
            below + weight * (above - below)
            for below, above, weight in zip(values[4:7], values[7:10], weights, strict=True)
        ]
        return [mean, var, std, std / max(mean, _EPS), low, high, *quantiles]

    return raw, finish


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
    return PackedStatistics(NORM_NAMES, *_norm_raw(norms, sorted_norms))


@torch.no_grad()
def _pair_raw(directions: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, Finish]:
    """Raw [Σ same-class pairs, Σ all pairs, number of same-class pairs] and its finish."""
    count = len(labels)
    classes = int(labels.max()) + 1  # the sync ``F.one_hot`` would do as well
    # per-class sums by scatter-add, not one_hot.T @ directions: a tiny matmul wakes
    # the BLAS thread pool, which costs milliseconds on a busy CPU
    class_sums = directions.new_zeros(classes, directions.shape[1]).index_add_(
        0, labels, directions
    )
    class_sizes = torch.bincount(labels, minlength=classes).to(directions.dtype)
    raw = torch.stack(
        (
            class_sums.square().sum(),  # Σ over same-class pairs incl. the N self-pairs
            class_sums.sum(dim=0).square().sum(),  # Σ over all pairs
            class_sizes.square().sum(),  # number of same-class pairs incl. self-pairs
        )
    )

    def finish(values: Sequence[float]) -> list[float]:
        same, total, same_pairs = values
        positive = _ratio(same - count, same_pairs - count)
        negative = _ratio(total - same, count * count - same_pairs)
        return [positive, negative, positive - negative]

    return raw, finish


@torch.no_grad()
def pair_cosines(directions: torch.Tensor, labels: torch.Tensor) -> PackedStatistics:
    """Mean cosine of positive (same label, i ≠ j) and negative pairs, and their gap.

    ``directions``: N × d unit rows. Computed from per-class sums of directions in
    O(N·d), without the N × N matrix: Σ_{i,j same class} cos = Σ_c ||Σ_{i∈c} f̂_i||²
    (the N self-pairs contribute exactly 1 each). A batch without positives (or
    negatives) yields NaN for that entry, kept as a gap in the series.
    """
    return PackedStatistics(PAIR_NAMES, *_pair_raw(directions, labels))


@torch.no_grad()
def _gradient_raw(
    embeddings: torch.Tensor, norms: torch.Tensor, grad: torch.Tensor, norm_order: torch.Tensor
) -> tuple[torch.Tensor, Finish]:
    """Raw sums of the gradient statistics (see ``gradient_statistics``) and their finish."""
    safe_norms = norms.clamp_min(_EPS)
    grad_norms = torch.linalg.vector_norm(grad, dim=1)
    radial = torch.linalg.vecdot(grad, embeddings) / safe_norms  # <g, f̂>
    safe_grad_norms = grad_norms.clamp_min(_EPS)
    active = grad_norms > _EPS
    # |cos(g, f)| of active samples; rotation ||g_⊥|| / ||f|| (g_⊥ = g − <g, f̂> f̂)
    cosine = torch.where(active, radial.abs() / safe_grad_norms, 0.0)
    rotation = (grad_norms.square() - radial.square()).clamp_min(0).sqrt() / safe_norms
    half = len(norm_order) // 2
    by_norm = rotation[norm_order]
    centred_grad = grad_norms - grad_norms.mean()
    inverse = safe_norms.reciprocal()
    centred_inverse = inverse - inverse.mean()
    per_sample = torch.stack(
        (cosine, active.to(grad.dtype), grad_norms, centred_grad * centred_inverse,
         centred_grad.square(), centred_inverse.square()),
    )  # fmt: skip
    raw = torch.cat(
        (per_sample.sum(dim=1), torch.stack((by_norm[:half].sum(), by_norm[-half:].sum())))
        if half
        else (per_sample.sum(dim=1), grad_norms.new_zeros(2))
    )
    count = len(norm_order)

    def finish(values: Sequence[float]) -> list[float]:
        cosines, active_count, grad_sum, cross, grad_square, inverse_square = values[:6]
        small, large = values[6:8]
        correlation = cross / max(math.sqrt(grad_square) * math.sqrt(inverse_square), _EPS)
        # zero gradient on the large-norm half (inactive loss): no ratio to report
        ratio = small / large if half and large / half > _EPS else _NAN
        return [grad_sum / count, correlation, _ratio(cosines, active_count), ratio]

    return raw, finish


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
    return PackedStatistics(GRADIENT_NAMES, *_gradient_raw(embeddings, norms, grad, norm_order))


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
        if previous is None:
            return PackedStatistics(DIRECTION_NAMES, embeddings.new_zeros(0), _no_turn)
        previous_norms, previous_directions = previous
        # 2·atan2(|u − v|, |u + v|) is exact for tiny angles, where acos(u·v) in
        # float32 cannot resolve anything below ~0.02°.
        gap = torch.linalg.vector_norm(directions - previous_directions, dim=1)
        total = torch.linalg.vector_norm(directions + previous_directions, dim=1)
        half_angles = torch.atan2(gap, total)  # radians, half the turn
        count, half = len(half_angles), len(half_angles) // 2
        if half:
            by_norm = half_angles[torch.argsort(previous_norms)]
            raw = torch.stack((half_angles.sum(), by_norm[:half].sum(), by_norm[-half:].sum()))
        else:
            raw = half_angles.sum().reshape(1)

        def finish(values: Sequence[float]) -> list[float]:
            degrees = [2 * math.degrees(value) for value in values]
            if not half:
                return [degrees[0] / count, _NAN]
            small, large = degrees[1] / half, degrees[2] / half
            # no movement at all (e.g. a step with zero loss): a ratio means nothing
            return [degrees[0] / count, small / large if large > _STILL_DEGREES else _NAN]

        return PackedStatistics(DIRECTION_NAMES, raw, finish)

    @property
    def norms(self) -> torch.Tensor:
        """The norms (M) of the tracked samples at the last ``update``."""
        if self.previous is None:
            raise ValueError("DirectionTracker.norms: update() has not been called yet")
        return self.previous[0]


def _no_turn(values: Sequence[float]) -> list[float]:
    """The first update: nothing to compare with yet."""
    return [_NAN, _NAN]


class StepStatistics:
    """Collects a step's statistics as tensors and moves them to the host at once.

    Packed groups are kept as they are (one raw tensor and its finish per group); single
    values are reshaped to length 1; ``to_host`` concatenates everything, syncs once,
    then finishes each group on the host.
    """

    def __init__(self) -> None:
        self.groups: list[PackedStatistics] = []
        self.blocks: list[torch.Tensor] = []
        self.sample_norms: torch.Tensor | None = None

    def add(self, values: Mapping[str, torch.Tensor]) -> None:
        if isinstance(values, PackedStatistics):
            self.groups.append(values)
            self.blocks.append(values.values.reshape(-1))
            return
        for name, value in values.items():
            block = value.detach().reshape(1)
            self.groups.append(PackedStatistics((name,), block))
            self.blocks.append(block)

    def to_host(self) -> tuple[dict[str, float], list[float]]:
        """One device → host transfer for everything (this is the step's sync point).
        A name added twice keeps its last value, as a dict would."""
        parts = list(self.blocks)
        if self.sample_norms is not None:
            parts.append(self.sample_norms.detach().reshape(-1))
        if not parts:
            return {}, []
        # cat promotes mixed dtypes; .float() rounds every raw value to float32 as before
        flat = torch.cat(parts).float().cpu().tolist()
        values: dict[str, float] = {}
        start = 0
        for group, block in zip(self.groups, self.blocks, strict=True):
            end = start + block.numel()
            values.update(zip(group.names, group.host_values(flat[start:end]), strict=True))
            start = end
        return values, flat[start:]


@torch.no_grad()
def batch_statistics(
    embeddings: torch.Tensor, labels: torch.Tensor, grad: torch.Tensor | None
) -> PackedStatistics:
    """All per-batch geometry statistics of raw embeddings (N × d) with labels (N):
    norm statistics, pair cosines and, given ``grad`` (∂L/∂embeddings), the gradient
    statistics, as one packed group."""
    return embedding_statistics(embeddings, labels, grad)[0]


@torch.no_grad()
def embedding_statistics(
    embeddings: torch.Tensor, labels: torch.Tensor, grad: torch.Tensor | None
) -> tuple[PackedStatistics, torch.Tensor, torch.Tensor]:
    """``batch_statistics``, plus the float embeddings' norms and their argsort, which
    ``gradient_statistics`` needs when the gradient arrives later (the SDK's hook)."""
    embeddings = embeddings.detach().float()
    norms = torch.linalg.vector_norm(embeddings, dim=1)
    sorted_norms, order = norms.sort()
    directions = embeddings / norms.clamp_min(_EPS)[:, None]
    parts = [_norm_raw(norms, sorted_norms), _pair_raw(directions, labels)]
    names = NORM_NAMES + PAIR_NAMES
    if grad is not None:
        parts.append(_gradient_raw(embeddings, norms, grad.detach().float(), order))
        names += GRADIENT_NAMES
    packed = PackedStatistics(names, torch.cat([raw for raw, _ in parts]), _chain(parts))
    return packed, norms, order


def _chain(parts: list[tuple[torch.Tensor, Finish]]) -> Finish:
    """One finish for raw vectors concatenated in order."""
    sizes = [raw.numel() for raw, _ in parts]

    def finish(values: Sequence[float]) -> list[float]:
        result, start = [], 0
        for size, (_, part) in zip(sizes, parts, strict=True):
            result += part(values[start : start + size])
            start += size
        return result

    return finish
