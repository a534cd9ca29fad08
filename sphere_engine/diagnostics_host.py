"""The host half of the per-step diagnostics: NumPy, float64, torch-free.

``sphere_engine.diagnostics`` moves each logged step's raw per-sample values (norms,
labels, gradient norms, <g, f>, turn angles) to the host in one transfer; these
functions turn them into the logged statistics (SCIENCE.md §6). Each returns
``{name: value}`` for every name of its ``*_NAMES`` tuple, except the histogram, which
returns only its non-empty bins (a batch fills a handful of the 120).

They run every logged step on O(N) numbers, where each NumPy call costs about a
microsecond whatever its size: they are written for few calls, and each statistic is
computed once (one argsort of the norms serves the quantiles and both halves).
"""

from __future__ import annotations

import math

import numpy as np

from sphere_engine.catalogue import norm_histogram as hist

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


def _ratio(numerator: float, denominator: float) -> float:
    return float(numerator / denominator) if denominator > 0 else _NAN


def halves(values: np.ndarray, order: np.ndarray) -> tuple[float, float]:
    """Mean of ``values`` over the smaller-norm half and over the larger-norm half
    (``order``: argsort of the norms; NaN for fewer than two samples); the halves
    leave out the median sample of an odd count."""
    half = len(order) // 2
    if not half:
        return _NAN, _NAN
    by_norm = values[order]
    return float(by_norm[:half].sum()) / half, float(by_norm[-half:].sum()) / half


def finish_norms(norms: np.ndarray, order: np.ndarray) -> dict[str, float]:
    """NORM_NAMES from the N norms (``order``: their argsort): population variance
    (divide by N), as the SEC paper reports it; percentiles interpolated linearly, as
    ``torch.quantile``."""
    count = len(norms)
    mean = float(norms.sum()) / count
    centred = norms - mean
    var = float(centred @ centred) / count
    std = math.sqrt(var)
    ordered = norms[order].tolist()
    last = count - 1
    quantiles = []
    for q in _QUANTILES:
        position = q * last
        below = math.floor(position)
        low, high = ordered[below], ordered[min(below + 1, last)]
        quantiles.append(low + (position - below) * (high - low))
    values = [mean, var, std, std / max(mean, EPS), ordered[0], ordered[-1], *quantiles]
    return dict(zip(NORM_NAMES, values, strict=True))


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


def histogram_fractions(norms: np.ndarray) -> dict[str, float]:
    """The non-empty bins of HISTOGRAM_NAMES: the fraction of the batch's finite norms
    in each (none when no norm is finite)."""
    counts = _bin_counts(norms)
    finite = len(norms) - int(counts[hist.BINS])
    filled = np.flatnonzero(counts[: hist.BINS]).tolist()
    if not finite:
        return {}
    return {HISTOGRAM_NAMES[i]: int(counts[i]) / finite for i in filled}


def finish_pairs(labels: np.ndarray, same: float, total: float) -> dict[str, float]:
    """PAIR_NAMES from the labels and the two pair sums (same-class, all) of cosines,
    self-pairs included."""
    count = len(labels)
    per_class = np.bincount(labels.astype(np.int64))
    same_pairs = float(per_class @ per_class)
    positive = _ratio(same - count, same_pairs - count)  # the N self-pairs count 1 each
    negative = _ratio(total - same, count * count - same_pairs)
    return dict(zip(PAIR_NAMES, (positive, negative, positive - negative), strict=True))


def finish_gradient(
    norms: np.ndarray, order: np.ndarray, grad_norms: np.ndarray, dots: np.ndarray
) -> dict[str, float]:
    """GRADIENT_NAMES from per-sample ||f|| (``order``: its argsort), ||g|| and <g, f>
    (see ``diagnostics.gradient_statistics``)."""
    count = len(norms)
    inverse = 1.0 / np.maximum(norms, EPS)
    radial = dots * inverse  # <g, f̂>
    active = grad_norms > EPS
    active_count = int(np.count_nonzero(active))
    if active_count == count:  # the usual case: no mask to apply
        cosines = float((np.abs(radial) / grad_norms).sum())
    elif active_count:
        cosines = float((np.abs(radial[active]) / grad_norms[active]).sum())
    else:
        cosines = 0.0
    rotation = np.sqrt(np.maximum(grad_norms * grad_norms - radial * radial, 0.0)) * inverse
    small, large = halves(rotation, order)
    # zero gradient on the large-norm half (inactive loss): no ratio to report
    ratio = small / large if large > EPS else _NAN
    grad_mean = float(grad_norms.sum()) / count
    centred_grad = grad_norms - grad_mean
    centred_inverse = inverse - float(inverse.sum()) / count
    spread = math.sqrt(float(centred_grad @ centred_grad)) * math.sqrt(
        float(centred_inverse @ centred_inverse)
    )
    correlation = float(centred_grad @ centred_inverse) / max(spread, EPS)
    values = (grad_mean, correlation, _ratio(cosines, active_count), ratio)
    return dict(zip(GRADIENT_NAMES, values, strict=True))


def finish_directions(half_angles: np.ndarray, previous_norms: np.ndarray) -> dict[str, float]:
    """DIRECTION_NAMES from each tracked sample's half turn angle (radians) and its norm
    at the previous update (the halves are by that norm)."""
    angles = np.degrees(2 * half_angles)
    small, large = halves(angles, np.argsort(previous_norms, kind="stable"))
    # no movement at all (e.g. a step with zero loss): a ratio means nothing
    ratio = small / large if large > _STILL_DEGREES else _NAN
    mean = float(angles.sum()) / len(angles)
    return dict(zip(DIRECTION_NAMES, (mean, ratio), strict=True))
