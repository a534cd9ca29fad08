"""Ranks of each query's positives by counting: MAP@R without ranking R neighbours.

MAP@R and R-precision need, per query, only where its R positives (reference samples
of its class) fall among its R nearest. Sort the positives by score, s_1 ≥ … ≥ s_R;
positive m then sits at rank m + n_m, n_m = negatives ranked above it, and

    AP@R = (1/R) Σ_{m : m + n_m ≤ R} m / (m + n_m),   R-precision = #{m : m + n_m ≤ R} / R.

Only negatives scoring at least the lowest positive s_R can precede a positive, and
of those only the R best can be in the top R (so where more than R clear s_R, the R-th
best negative is the bar instead; a positive below that bar gets m + n_m > R and drops
out by itself). Each candidate negative is located among the sorted positives by one
binary search and n_m is a cumulative histogram. Per block of queries this costs a
matmul, a float sort of R positive scores and a comparison pass, where ranking the top
R (a top-R selection plus an R-wide sort per query) cost several times more (60,000 ×
128 with R ≈ 6,000, SCIENCE.md §5).

Ties: equal scores rank by ascending reference index (``neighbors.py``). Only a
negative whose score equals one of the query's positives depends on it (at float32
resolution a few per query at R ≈ 6,000); for those the equal positives' indices are
compared, so the counts stay exact.
The short nearest-neighbour list (Recall@K, kNN vote) comes from the same candidates
(k ≤ R), else from a top-k of the same score block.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import torch

from sphere_engine.metrics.neighbors import exact_rows, score_rows, sort_rows

_CACHE_BYTES = 32 * 2**20
_TIE_CHUNK = 256  # tied negatives compared against all positives at once


@dataclass(frozen=True)
class RankedBlock:
    """One block of queries: their nearest neighbours and their positives' ranks."""

    queries: np.ndarray  # (q,) int64 query rows
    nearest: np.ndarray  # (q, k) int64 reference rows, nearest first (ties by index)
    hits_in_r: np.ndarray  # (q,) positives among the R nearest
    precision_sum: np.ndarray  # (q,) Σ_{i ≤ R} P@i · rel(i), i.e. R · AP@R


def _negatives_above(
    row: np.ndarray,
    positives: np.ndarray,
    positive_scores: np.ndarray,
    positive_ids: np.ndarray,
    ids: np.ndarray,
) -> np.ndarray:
    """For each candidate negative of one query, how many positives rank above it.

    row: the query's scores with its positives and itself at −inf; positives: its R
    positive scores ascending; positive_scores/positive_ids: the same unsorted, with
    their reference indices (the query itself at −inf); ids: reference index of each
    column of ``row``.
    """
    r, size = positives.size, row.size
    columns = np.flatnonzero(row >= positives[0])  # only these can precede a positive
    if columns.size > r + size // 4:  # the R-th best negative is a higher bar; worth a partition
        bar = np.partition(row, size - r)[size - r]
        columns = np.flatnonzero(row >= bar)
    values = row[columns]
    found = np.searchsorted(positives, values, side="right")  # positives ≤ each negative
    above = r - found
    tied = np.flatnonzero(found > 0)
    tied = tied[positives[found[tied] - 1] == values[tied]]
    for start in range(0, tied.size, _TIE_CHUNK):  # equal score: the lower index ranks first
        part = tied[start : start + _TIE_CHUNK]
        same = positive_scores[None, :] == values[part, None]
        earlier = positive_ids[None, :] < ids[columns[part], None]
        above[part] += np.count_nonzero(same & earlier, axis=1)
    return above, columns, values


def _nearest(
    k: int,
    above: np.ndarray,
    columns: np.ndarray,
    values: np.ndarray,
    positives: np.ndarray,
    positive_scores: np.ndarray,
    positive_ids: np.ndarray,
    ids: np.ndarray,
) -> np.ndarray:
    """The k nearest reference rows of one query (k ≤ R), from what counting found.

    A positive in the top k is among the k best positives; a negative there has fewer
    than k positives above it and, ranking within the top R, is a candidate. So the k
    best of those few, by score and then index, are the k nearest.
    """
    best = np.flatnonzero(positive_scores >= positives[-k])
    close = above < k
    scores = np.concatenate([positive_scores[best], values[close]])
    rows = np.concatenate([positive_ids[best], ids[columns[close]]])
    return rows[np.lexsort((rows, -scores))[:k]]


def _count_ranks(
    scores: np.ndarray,
    positives: np.ndarray,
    positive_scores: np.ndarray,
    positive_ids: np.ndarray,
    ids: np.ndarray,
    nearest: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """(hits_in_r, precision_sum) of a block; arrays as ``_negatives_above``, one row per
    query (row by row, so each score row is scanned while it is in cache). Fills
    ``nearest`` (b × k) when it has 0 < k ≤ R columns."""
    b, r = positives.shape
    k = nearest.shape[1]
    histogram = np.zeros((b, r + 1), dtype=np.int64)

    def count(part: range) -> None:
        for i in part:
            row = (positives[i], positive_scores[i], positive_ids[i], ids)
            above, columns, values = _negatives_above(scores[i], *row)
            histogram[i] = np.bincount(above, minlength=r + 1)
            if 0 < k <= r:
                nearest[i] = _nearest(k, above, columns, values, *row)

    # numpy releases the GIL in the scans, searches and partitions: one thread per core.
    threads = max(1, min(torch.get_num_threads(), b))
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(count, (range(t, b, threads) for t in range(threads))))
    preceding = np.cumsum(histogram[:, :r], axis=1)  # n_m for m = 1..R
    m = np.arange(1, r + 1)
    rank = preceding + m
    inside = rank <= r
    precision_sum = np.where(inside, m / rank, 0.0).sum(axis=1)
    return inside.sum(axis=1), precision_sum


def ranked_blocks(
    queries: np.ndarray,
    query_labels: np.ndarray,
    reference: np.ndarray,
    reference_labels: np.ndarray,
    positives: np.ndarray,
    query_rows: np.ndarray,
    *,
    exclude_self: bool,
    k: int,
    metric: str,
    memory_budget_mb: float,
) -> Iterator[RankedBlock]:
    """Blocks of ``query_rows`` (each with ``positives`` R ≥ 1; same array length as
    ``query_labels``): their k nearest and their positives' ranks (see the module doc).

    Arrays as in ``retrieval_scores``; k is clipped to the number of candidates.
    Blocks hold queries of equal R, chosen so that a block's score rows and per-row
    work arrays fit ``memory_budget_mb``.
    """
    size = reference.shape[0]
    order = np.argsort(reference_labels, kind="stable")  # each class contiguous
    sorted_labels = reference_labels[order]
    position = np.empty_like(order)
    position[order] = np.arange(size)
    classes, starts = np.unique(sorted_labels, return_index=True)
    ref = torch.from_numpy(np.ascontiguousarray(reference[order]))
    ref_sq = (ref * ref).sum(1)
    k = min(k, size - int(exclude_self))
    fetch = min(k + 1, size - int(exclude_self))  # one more: is the k-th tied with the next?

    r_of = positives[query_rows]
    grouped = query_rows[np.lexsort((query_labels[query_rows], -r_of))]
    start = 0
    while start < grouped.size:
        r = int(positives[grouped[start]])
        per_row = 4 * size + 40 * r + 48 * (fetch + 2)  # scores, positive arrays, ranks
        # Small blocks keep the score rows in cache between the matmul and the row scans.
        rows = max(1, min(int(memory_budget_mb * 2**20) // per_row, _CACHE_BYTES // (4 * size)))
        ids = grouped[start : start + rows]
        ids = ids[positives[ids] == r]
        start += ids.size
        yield _block(
            queries, query_labels, reference, ids, r, k, fetch,
            ref, ref_sq, order, position, classes, starts, exclude_self, metric,
        )  # fmt: skip


def _block(
    queries: np.ndarray,
    query_labels: np.ndarray,
    reference: np.ndarray,
    ids: np.ndarray,
    r: int,
    k: int,
    fetch: int,
    ref: torch.Tensor,
    ref_sq: torch.Tensor,
    order: np.ndarray,
    position: np.ndarray,
    classes: np.ndarray,
    starts: np.ndarray,
    exclude_self: bool,
    metric: str,
) -> RankedBlock:
    block = np.ascontiguousarray(queries[ids])
    labels = query_labels[ids]
    scores_t = score_rows(torch.from_numpy(block), ref, ref_sq, metric)
    scores = scores_t.numpy()
    rows = np.arange(ids.size)
    if exclude_self:
        scores[rows, position[ids]] = -np.inf

    if k > r:  # the counting's candidates hold the k nearest only for k ≤ R
        top_scores, top_columns = torch.topk(scores_t, fetch, dim=1)
        top_scores, nearest = sort_rows(top_scores.numpy(), order[top_columns.numpy()])
        if fetch > k:
            tied = np.flatnonzero(top_scores[:, k - 1] == top_scores[:, k])
            nearest = nearest[:, :k].copy()
            if tied.size:
                _, nearest[tied] = exact_rows(
                    block[tied], ids[tied], reference, k, exclude_self, metric
                )
    else:
        nearest = np.empty((ids.size, k), dtype=np.int64)

    width = r + int(exclude_self)  # the class's columns, the query's own included
    columns = starts[np.searchsorted(classes, labels)][:, None] + np.arange(width)
    positive_scores = scores[rows[:, None], columns]
    positives = np.sort(positive_scores, axis=1)[:, width - r :]  # the query's −inf dropped
    scores[rows[:, None], columns] = -np.inf
    hits, precision_sum = _count_ranks(
        scores, positives, positive_scores, order[columns], order, nearest
    )
    return RankedBlock(ids, nearest, hits, precision_sum)
