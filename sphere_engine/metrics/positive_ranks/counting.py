"""A part's hits in the top R and precision sums (and k nearest), its rows taken in
groups whose candidates fit the memory budget."""

from __future__ import annotations

import numpy as np

from sphere_engine.metrics.positive_ranks.candidates import below_the_bar, candidate_mask
from sphere_engine.metrics.positive_ranks.nearest import nearest_rows
from sphere_engine.metrics.positive_ranks.parts import Part
from sphere_engine.metrics.positive_ranks.positives_above import positives_above
from sphere_engine.metrics.precision_sums import precision_sums


def count_part(
    part: Part, k: int, guess: int, harmonic: np.ndarray, candidate_cap: int, mask: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(nearest or empty, hits_in_r, precision_sum) of a part's rows; ``mask``: a
    buffer as ``candidate_mask`` takes it."""
    count, r = part.positives.shape
    mask, per_row = candidate_mask(part, guess, mask)
    hits = np.empty(count, dtype=np.int64)
    precision = np.empty(count, dtype=np.float64)
    nearest = np.empty((count, k if 0 < k <= r else 0), dtype=np.int64)
    start = 0
    while start < count:  # rows in groups whose candidates fit the memory budget
        total = np.cumsum(per_row[start:])
        stop = start + max(1, int(np.searchsorted(total, candidate_cap, side="right")))
        sub, counts = part.rows(slice(start, stop)), per_row[start:stop]
        flat = np.flatnonzero(mask[start:stop])  # row-major: grouped by row
        rows, columns = np.divmod(flat, mask.shape[1])
        values = sub.negatives[rows, columns]
        counts, columns, values = below_the_bar(counts, columns, values, r)
        above = positives_above(sub, counts, columns, values)
        hits[start:stop], precision[start:stop] = precision_sums(counts, above, r, harmonic)
        if nearest.shape[1]:
            nearest[start:stop] = nearest_rows(sub, k, counts, columns, values, above)
        start = stop
    return nearest, hits, precision
