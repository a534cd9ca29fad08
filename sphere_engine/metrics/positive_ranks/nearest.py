"""The k nearest reference rows (k ≤ R) from what the counting found, without a top-k."""

from __future__ import annotations

import numpy as np

from sphere_engine.metrics.positive_ranks.parts import Part


def nearest_rows(
    part: Part, k: int, counts: np.ndarray, columns: np.ndarray, values: np.ndarray,
    above: np.ndarray,
) -> np.ndarray:  # fmt: skip
    """The k nearest reference rows of each row of a part (k ≤ R), from what counting
    found: a positive in the top k is among the k best positives; a negative there has
    fewer than k positives above it (so is a candidate). The k best of those few, by
    score and then index, are the k nearest."""
    count, r = part.positives.shape
    width = part.positive_scores.shape[1]
    best = np.flatnonzero(part.positive_scores >= part.positives[:, r - k, None])
    best_rows, best_columns = np.divmod(best, width)
    close = np.flatnonzero(above < k)
    rows = np.concatenate([best_rows, np.repeat(np.arange(count), counts)[close]])
    scores = np.concatenate([part.positive_scores.ravel()[best], values[close]])
    ids = np.concatenate([part.positive_ids[best_columns], part.ids[columns[close]]])
    order = np.lexsort((ids, -scores, rows))
    rows, ids = rows[order], ids[order]
    place = np.arange(rows.size) - np.searchsorted(rows, np.arange(count))[rows]
    keep = place < k
    nearest = np.empty((count, k), dtype=np.int64)
    nearest[rows[keep], place[keep]] = ids[keep]
    return nearest
