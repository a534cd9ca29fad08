"""MAP@R's sums from where each query's positives rank, in closed form.

``positive_ranks`` counts, per query, for each candidate negative how many positives
rank above it. Positive m (1-based, by score) then sits at rank m + n_m, and
R · AP@R = Σ_{m : m + n_m ≤ R} m / (m + n_m). Over a run of positives with the same
n_m = t that sum is a difference of harmonic numbers, so a row costs one pass over its
candidates, not one over its R positives.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np


def precision_sums(
    counts: np.ndarray, above: np.ndarray, r: int, harmonic: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(hits_in_r, precision_sum) of a part's rows from their candidates' counts
    (grouped by row, ``counts`` per row).

    Sorted per row, candidate t (1-based) has c_t positives above it; positives
    m ∈ (c_t, c_{t+1}] (c_{T+1} = R) have n_m = t, m ∈ [1, c_1] have none.
    """
    rows_count = counts.size
    rows = np.repeat(np.arange(rows_count), counts)
    above = np.sort(rows * (r + 1) + above) - rows * (r + 1)  # ascending within each row
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    t = np.arange(1, rows.size + 1) - np.repeat(starts, counts)
    following = np.append(above[1:], r)
    last = t == np.repeat(counts, counts)
    following[last] = r  # after a row's last candidate: up to R
    low = above + 1
    high = np.minimum(following, r - t)  # m + n_m ≤ R
    length = np.maximum(high - low + 1, 0)
    inside = np.flatnonzero(length)
    sums = length.astype(np.float64)
    t_in = t[inside]
    sums[inside] -= t_in * (harmonic[high[inside] + t_in] - harmonic[low[inside] - 1 + t_in])
    before_first = np.full(rows_count, r, dtype=np.int64)  # rows without candidates: all 0
    has = counts > 0
    before_first[has] = above[starts[has]]
    hits = before_first + np.bincount(rows, weights=length, minlength=rows_count).astype(np.int64)
    precision = before_first + np.bincount(rows, weights=sums, minlength=rows_count)
    return hits, precision


@lru_cache(maxsize=4)
def harmonic_numbers(r: int) -> np.ndarray:
    """H_0..H_R, H_m = Σ_{i ≤ m} 1/i (float64)."""
    return np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, r + 1))])
