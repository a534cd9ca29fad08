"""Where values fall in their rows' ascending arrays: ``searchsorted`` per row, batched.

``positive_ranks`` locates each candidate negative among its query's sorted positive
scores. A call per row costs Python overhead for every query; one search over
(row, value) keys of all rows at once is cheaper while rows are short, and costlier for
long ones (building the keys passes over every row's values ~6 times).
"""

from __future__ import annotations

import numpy as np

# Up to this row length the one search over keys; above it one search per row. At R =
# 99 (10k / 100 classes) the one search saves ~0.015 s CPU of 0.13; at R = 5,999 (60k /
# 10 classes) the keys cost ~10 ms a block (and ~70 MB of temporaries a thread) for
# ~0.6 ms of per-row searches.
ONE_SEARCH_MAX_WIDTH = 256


def positions_right(sorted_rows: np.ndarray, values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """For ``values`` grouped by row (``counts[i]`` of row i, in row order), each one's
    ``np.searchsorted(sorted_rows[row], value, "right")``. Values are finite."""
    rows_count, width = sorted_rows.shape
    if width <= ONE_SEARCH_MAX_WIDTH:
        rows = np.repeat(np.arange(counts.size), counts)
        # Rows in one ascending array of (row, value) keys: each value's "right"
        # position in it, less its row's offset.
        keys = row_keys(sorted_rows.ravel(), np.repeat(np.arange(rows_count), width))
        return np.searchsorted(keys, row_keys(values, rows), "right") - rows * width
    found = np.empty(values.size, dtype=np.int64)
    bounds = np.concatenate([[0], np.cumsum(counts)])
    for row in np.flatnonzero(counts):  # few µs each, GIL released inside
        start, stop = bounds[row], bounds[row + 1]
        found[start:stop] = np.searchsorted(sorted_rows[row], values[start:stop], "right")
    return found


def row_keys(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """int64 keys ordered as (row, value): the row in the high 32 bits, above the
    float32 value's bits mapped to an unsigned order that matches the floats' (exact,
    unlike a float offset per row). Values are finite; −0.0 is made +0.0 first, which
    the floats hold equal and the bits would not."""
    bits = (values + np.float32(0.0)).view(np.int32).astype(np.int64)
    # Negative floats order backwards as integers: flip their 31 magnitude bits.
    ordered = np.where(bits < 0, bits ^ 0x7FFFFFFF, bits) + 2**31  # into [0, 2³²)
    return (rows.astype(np.int64) << 32) | ordered
