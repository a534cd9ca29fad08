"""Each candidate negative located among its row's sorted positives: the positives ranked
above it, equal scores ordered by reference index."""

from __future__ import annotations

import numpy as np

from sphere_engine.metrics.positive_ranks.parts import Part
from sphere_engine.metrics.sorted_rows import positions_right

TIE_CHUNK = 256  # tied negatives compared against all positives at once


def positives_above(
    part: Part, counts: np.ndarray, columns: np.ndarray, values: np.ndarray
) -> np.ndarray:
    """For each candidate negative (grouped by row, ``counts`` per row), the positives
    ranked above it."""
    r = part.positives.shape[1]
    rows = np.repeat(np.arange(counts.size), counts)
    found = positions_right(part.positives, values, counts)
    above = r - found  # positives ≤ a candidate are not above it, ties aside
    tied = np.flatnonzero(found > 0)
    tied = tied[part.positives[rows[tied], found[tied] - 1] == values[tied]]
    for start in range(0, tied.size, TIE_CHUNK):  # equal score: the lower index ranks first
        chunk = tied[start : start + TIE_CHUNK]
        same = part.positive_scores[rows[chunk]] == values[chunk, None]
        earlier = part.positive_ids[None, :] < part.ids[columns[chunk], None]
        above[chunk] += np.count_nonzero(same & earlier, axis=1)
    return above
