"""The previous per-step (one row) host finish, kept verbatim as the reference that the
batched finish (``numpy_finish``, K rows at once) must reproduce to float64 rounding."""

from __future__ import annotations

import math

import numpy as np

from sphere_engine.catalogue import norm_histogram as hist
from sphere_engine.diagnostics.numpy_finish import (
    _QUANTILES,
    _STILL_DEGREES,
    DIRECTION_NAMES,
    EPS,
    GRADIENT_NAMES,
    HISTOGRAM_NAMES,
    NORM_NAMES,
    PAIR_NAMES,
    _bin_counts,
)

_NAN = float("nan")


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
    values = [
        mean,
        var,
        std,
        (std / mean if mean > 0 else math.nan),
        ordered[0],
        ordered[-1],
        *quantiles,
    ]
    return dict(zip(NORM_NAMES, values, strict=True))


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
