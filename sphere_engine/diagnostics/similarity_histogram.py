"""Positive / negative cosine histograms of a pair loss's batch, finished on the host
(NumPy): the fraction of each kind of pair in each fixed bin of
``catalogue.similarity_histogram``, empty bins left out. The engine counts on the
device (``losses.mining_record``); the SDK's ``Run.log_mining`` counts here."""

from __future__ import annotations

import numpy as np

from sphere_engine.catalogue import similarity_histogram as hist

POSITIVE_NAMES = tuple(hist.bin_key(hist.POSITIVE, i) for i in range(hist.BINS))
NEGATIVE_NAMES = tuple(hist.bin_key(hist.NEGATIVE, i) for i in range(hist.BINS))


def bin_counts(similarities: np.ndarray) -> np.ndarray:
    """Counts of the finite cosines per bin (BINS,); values just outside [-1, 1] (rounding)
    land in the end bins."""
    values = np.asarray(similarities, dtype=np.float64).reshape(-1)
    values = values[np.isfinite(values)]
    bins = np.clip(((values - hist.LOW) / hist.WIDTH).astype(np.int64), 0, hist.BINS - 1)
    return np.bincount(bins, minlength=hist.BINS).astype(np.float64)


def _fractions(counts: np.ndarray, names: tuple[str, ...]) -> dict[str, float]:
    total = counts.sum()
    if total <= 0:
        return {}
    return {names[i]: float(counts[i] / total) for i in np.flatnonzero(counts)}


def finish_histograms(raw: np.ndarray) -> list[dict[str, float]]:
    """K rows of 2 × BINS counts (positive bins, then negative) → the logged fractions."""
    return [
        _fractions(row[: hist.BINS], POSITIVE_NAMES) | _fractions(row[hist.BINS :], NEGATIVE_NAMES)
        for row in np.asarray(raw, dtype=np.float64)
    ]


def similarity_fractions(positive: np.ndarray, negative: np.ndarray) -> dict[str, float]:
    """The logged fractions of one batch's positive and negative pair cosines."""
    return finish_histograms(np.concatenate([bin_counts(positive), bin_counts(negative)])[None])[0]
