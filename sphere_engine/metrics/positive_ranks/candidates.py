"""Which negatives of a row are counted: those ≥ θ = a_K for a K the check of the package
doc vouches for (``candidate_mask``), cut at the row's R-th best negative where too many
remain (``below_the_bar``)."""

from __future__ import annotations

import numpy as np

from sphere_engine.metrics.positive_ranks.parts import Part


def candidate_mask(part: Part, guess: int, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mask, count per row) of the candidates: per row, negatives ≥ θ = a_K for a K
    that passes the check of the package doc. ``mask``: p × n' bool buffer, n' ≥ n a
    multiple of 8, its columns past n False.

    K is the guess where it passes. Where it fails, c = the negatives ≥ a_K is below
    K − 1; K' = c + 1 < K then passes for sure (a_K' ≤ a_K has at least those c
    negatives above it), and is the largest K that this count vouches for.
    """
    k = min(max(guess, 1), part.positives.shape[1])
    theta = part.positives[:, k - 1].copy()
    counts = mask_counts(part.negatives, theta, mask)
    failed = counts < k - 1
    if failed.any():
        # One more pass over the whole block (the passing rows' masks come out the
        # same): about the CPU of a row-by-row pass over the failed ones, in one call
        # that releases the GIL.
        theta[failed] = part.positives[failed, counts[failed]]  # a_{c+1}, 0-based c
        counts = mask_counts(part.negatives, theta, mask)
    return mask, counts


def mask_counts(negatives: np.ndarray, theta: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Fill ``mask`` with negatives ≥ θ per row; return the count per row."""
    np.greater_equal(negatives, theta[:, None], out=mask[:, : negatives.shape[1]])
    # Bytes of 0/1 summed eight at a time: a uint64 word times 0x0101…01 holds its
    # byte sum in the top byte (~3× numpy's row sum of bools).
    words = mask.view(np.uint64)
    return ((words * np.uint64(0x0101010101010101)) >> np.uint64(56)).sum(axis=1).astype(np.int64)


def below_the_bar(
    counts: np.ndarray, columns: np.ndarray, values: np.ndarray, r: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Drop a crowded row's candidates below its R-th best negative (the bar).

    At least R negatives score ≥ the bar, so a sample below it ranks beyond R; a
    positive below it has all those kept above it (m + n_m > R). Only rows with more
    than 1.25 R candidates (untrained embeddings) pay for the partition.
    """
    crowded = np.flatnonzero(counts > r + r // 4)
    if crowded.size == 0:
        return counts, columns, values
    bounds = np.concatenate([[0], np.cumsum(counts)])
    keep = np.ones(values.size, dtype=bool)
    for row in crowded:
        start, stop = bounds[row], bounds[row + 1]
        own = values[start:stop]
        bar = np.partition(own, own.size - r)[own.size - r]
        keep[start:stop] = own >= bar
    rows = np.repeat(np.arange(counts.size), counts)
    return np.bincount(rows[keep], minlength=counts.size), columns[keep], values[keep]
