"""The host half of the per-step diagnostics: NumPy, float64, torch-free.

``sphere_engine.diagnostics`` moves each logged step's raw per-sample values (norms,
labels, gradient norms, <g, f>, turn angles) to the host in one transfer; these
functions turn them into the logged statistics (SCIENCE.md §6). Each returns a K-row
array, one column per name of its ``*_NAMES`` tuple, except the histogram, which
returns per row only its non-empty bins (a batch fills a handful of the 120).

They run on K × N matrices, K logged steps at once (``sphere_engine.diagnostics.batched_finish``
batches them; a single step is K = 1): each NumPy call costs about a
microsecond whatever its size: they are written for few calls, and each statistic is
computed once (one argsort of the norms serves the quantiles and both halves).
"""

from __future__ import annotations

import math

import numpy as np

from sphere_engine.catalogue import norm_histogram as hist
from sphere_engine.geometry import norm_cv

EPS = 1e-12
_STILL_DEGREES = 1e-6  # below this mean turn the tracked samples did not move
_QUANTILES = (0.05, 0.5, 0.95)
_NAN = float("nan")

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
# One fraction per fixed bin (``catalogue.norm_histogram``); only the non-empty bins are
# logged, so a step logs a handful of them.
HISTOGRAM_NAMES = tuple(hist.bin_key(i) for i in range(hist.BINS))


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator per row, NaN where the denominator is not positive."""
    return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1), _NAN)


def halves(values: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row (K × N): mean of ``values`` over the smaller-norm half and over the
    larger-norm half (``order``: per-row argsort of the norms; NaN for fewer than two
    samples); the halves leave out the median sample of an odd count."""
    half = order.shape[1] // 2
    if not half:
        return np.full(len(order), _NAN), np.full(len(order), _NAN)
    by_norm = np.take_along_axis(values, order, axis=1)
    return by_norm[:, :half].sum(axis=1) / half, by_norm[:, -half:].sum(axis=1) / half


def finish_norms(norms: np.ndarray, ordered: np.ndarray) -> np.ndarray:
    """NORM_NAMES (K × 9) from K rows of N norms (``ordered``: each row sorted):
    population variance (divide by N), as the SEC paper reports it; percentiles
    interpolated linearly, as ``torch.quantile``."""
    count = norms.shape[1]
    mean = norms.sum(axis=1) / count
    centred = norms - mean[:, None]
    var = (centred * centred).sum(axis=1) / count
    std = np.sqrt(var)
    last = count - 1
    columns = [mean, var, std, norm_cv(std, mean), ordered[:, 0], ordered[:, -1]]
    for q in _QUANTILES:
        position = q * last
        below = math.floor(position)
        low, high = ordered[:, below], ordered[:, min(below + 1, last)]
        columns.append(low + (position - below) * (high - low))
    return np.stack(columns, axis=1)


def _bin_of(norm: float) -> int:
    """The binning rule, unclipped: floor((log10(norm) − LOW) · BINS_PER_DECADE)."""
    position = (np.log10(np.array([norm])) - hist.LOW_EXPONENT) * hist.BINS_PER_DECADE
    return int(np.floor(position)[0])


def _bin_starts() -> np.ndarray:
    """The smallest float64 norm of each bin 1 … BINS−1 under the binning rule, then
    +inf, so that ``searchsorted`` finds every norm's bin in one call: out-of-range norms
    land in the end bins, NaN and inf past the last one. Each start is 10^(LOW + i/24),
    moved to the exact float64 where the rule (log10 rounding included) changes bin."""
    starts = []
    for index in range(1, hist.BINS):
        start = 10.0 ** (hist.LOW_EXPONENT + index / hist.BINS_PER_DECADE)
        while _bin_of(start) >= index:
            start = float(np.nextafter(start, 0.0))
        while _bin_of(start) < index:
            start = float(np.nextafter(start, math.inf))
        starts.append(start)
    return np.array([*starts, math.inf])


_BIN_STARTS = _bin_starts()


def _bin_counts(norms: np.ndarray) -> np.ndarray:
    """Counts of the norms per bin, plus (last) the count of non-finite norms."""
    bins = np.searchsorted(_BIN_STARTS, norms, side="right")
    return np.bincount(bins, minlength=hist.BINS + 1)


def norm_histogram(norms: np.ndarray) -> np.ndarray:
    """Counts of the norms in the catalogue's fixed log-spaced bins (``hist.BINS``);
    out-of-range norms land in the end bins, non-finite ones are not counted (a
    diverging step must still reach the divergence check)."""
    values = np.asarray(norms, dtype=np.float64).reshape(-1)
    return _bin_counts(values)[: hist.BINS].astype(np.float64)


def histogram_fractions(norms: np.ndarray) -> list[dict[str, float]]:
    """Per row (K × N): the non-empty bins of HISTOGRAM_NAMES, the fraction of the
    row's finite norms in each (none when no norm is finite). One ``searchsorted`` over
    the whole matrix, one ``bincount`` with a per-row offset."""
    rows, width = norms.shape[0], hist.BINS + 1
    bins = np.searchsorted(_BIN_STARTS, norms, side="right")
    bins += np.arange(rows)[:, None] * width
    counts = np.bincount(bins.reshape(-1), minlength=rows * width).reshape(rows, width)
    finite = norms.shape[1] - counts[:, hist.BINS]
    row_of, bin_of = np.nonzero(counts[:, : hist.BINS])  # empty for a row without finite norms
    fractions = counts[row_of, bin_of] / finite[row_of]
    result: list[dict[str, float]] = [{} for _ in range(rows)]
    for row, index, fraction in zip(
        row_of.tolist(), bin_of.tolist(), fractions.tolist(), strict=True
    ):
        result[row][HISTOGRAM_NAMES[index]] = fraction
    return result


def finish_pairs(labels: np.ndarray, same: np.ndarray, total: np.ndarray) -> np.ndarray:
    """PAIR_NAMES (K × 3) from K rows of labels and the two pair sums (same-class, all)
    of cosines per row, self-pairs included."""
    rows, count = labels.shape
    codes = labels.astype(np.int64)
    classes = int(codes.max()) + 1
    codes += np.arange(rows)[:, None] * classes
    per_class = np.bincount(codes.reshape(-1), minlength=rows * classes).reshape(rows, classes)
    same_pairs = (per_class * per_class).sum(axis=1).astype(np.float64)
    positive = _ratio(same - count, same_pairs - count)  # the N self-pairs count 1 each
    negative = _ratio(total - same, count * count - same_pairs)
    return np.stack((positive, negative, positive - negative), axis=1)


def finish_gradient(
    norms: np.ndarray, order: np.ndarray, grad_norms: np.ndarray, dots: np.ndarray
) -> np.ndarray:
    """GRADIENT_NAMES (K × 4) from K rows of per-sample ||f|| (``order``: per-row
    argsort), ||g|| and <g, f> (see ``diagnostics.gradient_statistics``)."""
    count = norms.shape[1]
    inverse = 1.0 / np.maximum(norms, EPS)
    radial = dots * inverse  # <g, f̂>
    active = grad_norms > EPS
    active_count = np.count_nonzero(active, axis=1)
    cosines = np.where(active, np.abs(radial) / np.where(active, grad_norms, 1.0), 0.0)
    rotation = np.sqrt(np.maximum(grad_norms * grad_norms - radial * radial, 0.0)) * inverse
    small, large = halves(rotation, order)
    # zero gradient on the large-norm half (inactive loss): no ratio to report
    ratio = np.where(large > EPS, small / np.where(large > EPS, large, 1.0), _NAN)
    grad_mean = grad_norms.sum(axis=1) / count
    centred_grad = grad_norms - grad_mean[:, None]
    centred_inverse = inverse - (inverse.sum(axis=1) / count)[:, None]
    spread = np.sqrt((centred_grad * centred_grad).sum(axis=1)) * np.sqrt(
        (centred_inverse * centred_inverse).sum(axis=1)
    )
    correlation = (centred_grad * centred_inverse).sum(axis=1) / np.maximum(spread, EPS)
    radial_cos = _ratio(cosines.sum(axis=1), active_count.astype(np.float64))
    return np.stack((grad_mean, correlation, radial_cos, ratio), axis=1)


def finish_directions(half_angles: np.ndarray, previous_norms: np.ndarray) -> np.ndarray:
    """DIRECTION_NAMES (K × 2) from K rows of each tracked sample's half turn angle
    (radians) and its norm at the previous update (the halves are by that norm)."""
    angles = np.degrees(2 * half_angles)
    small, large = halves(angles, np.argsort(previous_norms, axis=1, kind="stable"))
    # no movement at all (e.g. a step with zero loss): a ratio means nothing
    still = large > _STILL_DEGREES
    ratio = np.where(still, small / np.where(still, large, 1.0), _NAN)
    mean = angles.sum(axis=1) / angles.shape[1]
    return np.stack((mean, ratio), axis=1)


# ---- the per-sample reductions of a CPU batch, done here rather than in torch ----------
# (``diagnostics`` hands small CPU batches over whole: on 40 × 64 numbers each torch op
# costs several microseconds of dispatch, and K steps of them reduce here in one call)


def _row_norms(vectors: np.ndarray) -> np.ndarray:
    """L2 norm along the last axis."""
    return np.sqrt(np.einsum("...d,...d->...", vectors, vectors))


def _unit(vectors: np.ndarray, norms: np.ndarray) -> np.ndarray:
    return vectors / np.maximum(norms, EPS)[..., None]


def pair_sums(
    embeddings: np.ndarray, norms: np.ndarray, labels: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per row (K × N × d raw embeddings, their K × N norms, K × N integer labels): Σ of
    cosines over same-class pairs and over all pairs, self-pairs included, as
    Σ_c ||Σ_{i∈c} f̂_i||² and ||Σ_i f̂_i||². All K rows' class sums come from one stable
    sort of (row, label) codes, one scaled gather and one ``reduceat``, whatever the
    labels' values; the row sums are the sums of the row's class sums."""
    rows, count = embeddings.shape[0], embeddings.shape[1]
    codes = labels.astype(np.int64)
    low = int(codes.min())
    span = int(codes.max()) - low + 1
    flat = (codes - low + np.arange(rows)[:, None] * span).reshape(-1)
    order = np.argsort(flat, kind="stable")
    ordered = flat[order]
    starts = np.flatnonzero(np.diff(ordered, prepend=-1))
    inverse = 1.0 / np.maximum(norms.reshape(-1)[order], EPS)
    # gathered straight from the K × N × d view (a column slice of the stacked raw rows:
    # reshaping it to (K·N) × d first would copy it whole)
    directions = embeddings[order // count, order % count] * inverse[:, None]
    class_sums = np.add.reduceat(directions, starts, axis=0)
    row_of_class = ordered[starts] // span
    same = np.bincount(row_of_class, np.einsum("gd,gd->g", class_sums, class_sums), rows)
    row_starts = np.flatnonzero(np.diff(row_of_class, prepend=-1))  # every row has a class
    totals = np.add.reduceat(class_sums, row_starts, axis=0)
    return same, np.einsum("kd,kd->k", totals, totals)


def batch_per_sample(
    embeddings: np.ndarray, labels: np.ndarray, grads: np.ndarray | None
) -> np.ndarray:
    """K rows of the values the device path computes from a batch (K × N × d raw
    embeddings, K × N labels, K × N × d gradients or None): per row N norms, N labels,
    the two pair sums, then (with gradients) N ||g|| and N <g, f>."""
    norms = _row_norms(embeddings)
    same, total = pair_sums(embeddings, norms, labels)
    parts = [norms, labels, same[:, None], total[:, None]]
    if grads is not None:
        parts += _gradient_columns(embeddings, grads)
    return np.concatenate(parts, axis=1)


def gradient_per_sample(embeddings: np.ndarray, grads: np.ndarray) -> np.ndarray:
    """K rows of N norms, N ||g|| and N <g, f> from K × N × d embeddings and gradients."""
    return np.concatenate([_row_norms(embeddings), *_gradient_columns(embeddings, grads)], 1)


def _gradient_columns(embeddings: np.ndarray, grads: np.ndarray) -> list[np.ndarray]:
    """Per sample ||g|| and <g, f> (K × N each), the device path's ``_gradient_raw``."""
    return [_row_norms(grads), np.einsum("knd,knd->kn", grads, embeddings)]


def half_turns(previous: np.ndarray, current: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per tracked sample (K × M × d embeddings at the previous and this update): half
    the angle it turned, atan2(|u − v|, |u + v|) (exact for tiny angles, where acos of
    a float32 cosine cannot resolve ~0.02°), and its norm at the previous update."""
    previous_norms = _row_norms(previous)
    before, after = _unit(previous, previous_norms), _unit(current, _row_norms(current))
    return np.arctan2(_row_norms(after - before), _row_norms(after + before)), previous_norms


def named_rows(names: tuple[str, ...], values: np.ndarray) -> list[dict[str, float]]:
    """K × len(names) values → one ``{name: value}`` per row."""
    return [dict(zip(names, row, strict=True)) for row in values.tolist()]
