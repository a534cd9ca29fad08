"""Per-iteration geometry diagnostics of a batch of embeddings (SCIENCE.md §6).

The device (under ``torch.no_grad``) does only what needs the N × d tensors: the
per-sample norms, the gradient's norm and its dot product with the embedding, the sums
of directions per class. Each group of statistics is ONE small raw vector of those
(O(N) numbers) plus a ``finish`` function that computes the statistics from them on
the host with NumPy in float64 (moments, percentiles, ratios, correlations, NaN for an
empty half), after ``StepStatistics.to_host`` has concatenated every group and moved
it to the CPU once per logged step (one device sync, not one per statistic).
``PackedStatistics`` is the read-only mapping from name to value of one group.

This runs every training step, so it is written for few tensor operations: on a CPU
each op costs microseconds of dispatch whatever its size (on 40 numbers NumPy is
several times cheaper), and a tiny matmul may wake the BLAS thread pool (milliseconds
on a loaded machine). Moving O(N) numbers instead of a few scalars costs nothing
measurable on a GPU (the transfer is latency-bound).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping

import numpy as np
import torch

from sphere_engine.catalogue import norm_histogram as hist

_EPS = 1e-12
_STILL_DEGREES = 1e-6  # below this mean turn the tracked samples did not move
_QUANTILES = (0.05, 0.5, 0.95)
_NAN = float("nan")

Finish = Callable[[np.ndarray], list[float]]  # raw float64 values → one value per name

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
# One fraction per fixed bin (``catalogue.norm_histogram``); ``StepStatistics.to_host``
# keeps only the non-empty bins, so a step logs a handful of them.
HISTOGRAM_NAMES = tuple(hist.bin_key(i) for i in range(hist.BINS))


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

    def host_values(self, raw: np.ndarray) -> list[float]:
        """One value per name from this group's raw values as read on the host."""
        return raw.tolist() if self.finish is None else self.finish(raw)

    def __getitem__(self, name: str) -> torch.Tensor:
        index = self.names.index(name)
        if self.finish is None:
            return self.values[index]
        raw = self.values.detach().float().cpu().numpy().astype(np.float64)
        with np.errstate(all="ignore"):  # NaN/inf of a diverging run are values (gaps)
            return torch.tensor(self.host_values(raw)[index], dtype=torch.float64)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


def _ratio(numerator: float, denominator: float) -> float:
    return float(numerator / denominator) if denominator > 0 else _NAN


def _halves(values: np.ndarray, order: np.ndarray) -> tuple[float, float]:
    """Mean of ``values`` over the smaller-norm half and over the larger-norm half
    (``order``: argsort of the norms; NaN for fewer than two samples); the halves
    leave out the median sample of an odd count."""
    half = len(order) // 2
    if not half:
        return _NAN, _NAN
    by_norm = values[order]
    return float(by_norm[:half].sum()) / half, float(by_norm[-half:].sum()) / half


def _finish_norms(norms: np.ndarray, order: np.ndarray) -> list[float]:
    """NORM_NAMES from the N norms (``order``: their argsort): population variance
    (divide by N), as the SEC paper reports it; percentiles interpolated linearly, as
    ``torch.quantile``."""
    count = len(norms)
    mean = float(norms.sum()) / count
    centred = norms - mean
    var = float(centred @ centred) / count
    std = math.sqrt(var)
    ordered = norms[order]
    last = count - 1
    quantiles = []
    for q in _QUANTILES:
        position = q * last
        below = math.floor(position)
        low, high = float(ordered[below]), float(ordered[min(below + 1, last)])
        quantiles.append(low + (position - below) * (high - low))
    return [mean, var, std, std / max(mean, _EPS), float(ordered[0]), float(ordered[-1]),
            *quantiles]  # fmt: skip


def norm_histogram(norms: np.ndarray | torch.Tensor) -> np.ndarray:
    """Counts of the norms in the catalogue's fixed log-spaced bins (``hist.BINS``);
    out-of-range norms land in the end bins, non-finite ones are not counted (a
    diverging step must still reach the divergence check). On the host: the norms are
    there already, so the histogram costs no device op."""
    values = np.asarray(norms, dtype=np.float64).reshape(-1)
    values = values[np.isfinite(values)]
    with np.errstate(divide="ignore"):
        position = (np.log10(np.maximum(values, _EPS)) - hist.LOW_EXPONENT) * hist.BINS_PER_DECADE
    index = np.clip(np.floor(position), 0, hist.BINS - 1).astype(np.int64)
    return np.bincount(index, minlength=hist.BINS).astype(np.float64)


def _histogram_fractions(norms: np.ndarray) -> list[float]:
    """HISTOGRAM_NAMES: the fraction of the batch's finite norms in each bin."""
    counts = norm_histogram(norms)
    total = counts.sum()
    return (counts / total if total else counts).tolist()


@torch.no_grad()
def norm_statistics(
    norms: torch.Tensor, sorted_norms: torch.Tensor | None = None
) -> PackedStatistics:
    """Statistics of the L2 norms (one per sample) of a batch of raw embeddings.

    ``norm/var`` is the population variance (divide by N), as the SEC paper reports it.
    (``sorted_norms`` is accepted for compatibility; the host sorts.)
    """

    def finish(raw: np.ndarray) -> list[float]:
        return _finish_norms(raw, np.argsort(raw, kind="stable"))

    return PackedStatistics(NORM_NAMES, norms.detach().reshape(-1), finish)


@torch.no_grad()
def _pair_sums(directions: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """[Σ over same-class pairs, Σ over all pairs] of cosines, self-pairs included."""
    classes = int(labels.max()) + 1  # the sync ``F.one_hot`` would do as well
    # per-class sums by scatter-add, not one_hot.T @ directions: a tiny matmul wakes
    # the BLAS thread pool, which costs milliseconds on a busy CPU
    class_sums = directions.new_zeros(classes, directions.shape[1]).index_add_(
        0, labels, directions
    )
    return torch.stack((class_sums.square().sum(), class_sums.sum(dim=0).square().sum()))


def _finish_pairs(labels: np.ndarray, same: float, total: float) -> list[float]:
    """PAIR_NAMES from the labels and the two pair sums of ``_pair_sums``."""
    count = len(labels)
    same_pairs = float(np.square(np.bincount(labels.astype(np.int64))).sum())
    positive = _ratio(same - count, same_pairs - count)  # the N self-pairs count 1 each
    negative = _ratio(total - same, count * count - same_pairs)
    return [positive, negative, positive - negative]


@torch.no_grad()
def pair_cosines(directions: torch.Tensor, labels: torch.Tensor) -> PackedStatistics:
    """Mean cosine of positive (same label, i ≠ j) and negative pairs, and their gap.

    ``directions``: N × d unit rows. Computed from per-class sums of directions in
    O(N·d), without the N × N matrix: Σ_{i,j same class} cos = Σ_c ||Σ_{i∈c} f̂_i||²
    (the N self-pairs contribute exactly 1 each). A batch without positives (or
    negatives) yields NaN for that entry, kept as a gap in the series.
    """
    count = len(labels)

    def finish(raw: np.ndarray) -> list[float]:
        return _finish_pairs(raw[:count], raw[count], raw[count + 1])

    raw = torch.cat((labels.reshape(-1), _pair_sums(directions, labels)))
    return PackedStatistics(PAIR_NAMES, raw, finish)


def _finish_gradient(
    norms: np.ndarray, order: np.ndarray, grad_norms: np.ndarray, dots: np.ndarray
) -> list[float]:
    """GRADIENT_NAMES from per-sample ||f|| (``order``: its argsort), ||g|| and <g, f>
    (see gradient_statistics)."""
    count = len(norms)
    inverse = 1.0 / np.maximum(norms, _EPS)
    radial = dots * inverse  # <g, f̂>
    active = grad_norms > _EPS
    active_count = int(np.count_nonzero(active))
    cosines = float((np.abs(radial[active]) / grad_norms[active]).sum()) if active_count else 0.0
    rotation = np.sqrt(np.maximum(grad_norms * grad_norms - radial * radial, 0.0)) * inverse
    small, large = _halves(rotation, order)
    # zero gradient on the large-norm half (inactive loss): no ratio to report
    ratio = small / large if large > _EPS else _NAN
    grad_mean = float(grad_norms.sum()) / count
    centred_grad = grad_norms - grad_mean
    centred_inverse = inverse - float(inverse.sum()) / count
    spread = math.sqrt(float(centred_grad @ centred_grad)) * math.sqrt(
        float(centred_inverse @ centred_inverse)
    )
    correlation = float(centred_grad @ centred_inverse) / max(spread, _EPS)
    return [grad_mean, correlation, _ratio(cosines, active_count), ratio]


@torch.no_grad()
def _gradient_raw(embeddings: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
    """Per-sample [||g|| ..., <g, f> ...]: all the device does for the gradient."""
    return torch.cat((torch.linalg.vector_norm(grad, dim=1), torch.linalg.vecdot(grad, embeddings)))


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
    (``norm_order`` is accepted for compatibility; the host sorts.)
    """
    count = len(norms)

    def finish(raw: np.ndarray) -> list[float]:
        norms = raw[:count]
        order = np.argsort(norms, kind="stable")
        return _finish_gradient(norms, order, raw[count : 2 * count], raw[2 * count :])

    raw = torch.cat((norms.detach().reshape(-1), _gradient_raw(embeddings, grad)))
    return PackedStatistics(GRADIENT_NAMES, raw, finish)


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
        count = len(norms)

        def finish(raw: np.ndarray) -> list[float]:
            angles = np.degrees(2 * raw[:count])
            small, large = _halves(angles, np.argsort(raw[count:], kind="stable"))
            # no movement at all (e.g. a step with zero loss): a ratio means nothing
            ratio = small / large if large > _STILL_DEGREES else _NAN
            return [float(angles.mean()), ratio]

        raw = torch.cat((torch.atan2(gap, total), previous_norms))
        return PackedStatistics(DIRECTION_NAMES, raw, finish)

    @property
    def norms(self) -> torch.Tensor:
        """The norms (M) of the tracked samples at the last ``update``."""
        if self.previous is None:
            raise ValueError("DirectionTracker.norms: update() has not been called yet")
        return self.previous[0]


def _no_turn(raw: np.ndarray) -> list[float]:
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
        if not values:
            return
        # named 0-dim tensors (loss terms, regulariser diagnostics): one stack, one block
        with torch.no_grad():
            block = torch.stack(list(values.values())).reshape(-1)
        self.groups.append(PackedStatistics(tuple(values), block))
        self.blocks.append(block)

    def to_host(self) -> tuple[dict[str, float], list[float]]:
        """One device → host transfer for everything (this is the step's sync point).
        A name added twice keeps its last value, as a dict would."""
        parts = list(self.blocks)
        if self.sample_norms is not None:
            parts.append(self.sample_norms.detach().reshape(-1))
        if not parts:
            return {}, []
        # cat promotes mixed dtypes (labels are exact in float32 below 2**24); every raw
        # value is rounded to float32 on the device, then finished in float64
        flat = torch.cat(parts).float().cpu().numpy().astype(np.float64)
        values: dict[str, float] = {}
        start = 0
        with np.errstate(all="ignore"):  # NaN/inf of a diverging run are values (gaps)
            for group, block in zip(self.groups, self.blocks, strict=True):
                end = start + block.numel()
                values.update(zip(group.names, group.host_values(flat[start:end]), strict=True))
                start = end
        empty_bins = [k for k, v in values.items() if k.startswith(hist.PREFIX) and not v]
        for key in empty_bins:  # the histogram logs its non-empty bins only
            del values[key]
        return values, flat[start:].tolist()


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
) -> tuple[PackedStatistics, torch.Tensor]:
    """``batch_statistics`` and the float embeddings' norms, which ``gradient_statistics``
    needs when the gradient arrives later (the SDK's hook)."""
    embeddings = embeddings.detach().float()
    norms = torch.linalg.vector_norm(embeddings, dim=1)
    directions = embeddings / norms.clamp_min(_EPS)[:, None]
    parts = [norms, labels.reshape(-1), _pair_sums(directions, labels)]
    names = NORM_NAMES + HISTOGRAM_NAMES + PAIR_NAMES
    if grad is not None:
        parts.append(_gradient_raw(embeddings, grad.detach().float()))
        names += GRADIENT_NAMES
    count = len(norms)

    def finish(raw: np.ndarray) -> list[float]:
        values, labels_, pairs = raw[:count], raw[count : 2 * count], raw[2 * count :]
        order = np.argsort(values, kind="stable")
        result = _finish_norms(values, order) + _histogram_fractions(values)
        result += _finish_pairs(labels_, pairs[0], pairs[1])
        if grad is not None:
            result += _finish_gradient(values, order, pairs[2 : 2 + count], pairs[2 + count :])
        return result

    return PackedStatistics(names, torch.cat(parts), finish), norms
