"""One block of one class's queries: its scores (one sgemm), its positives split off and
counted; the top-k fallback where k > R."""

from __future__ import annotations

import numpy as np
import torch

from sphere_engine.metrics.neighbors import exact_rows, sort_rows
from sphere_engine.metrics.positive_ranks.counting import count_part
from sphere_engine.metrics.positive_ranks.parts import Part, RankedBlock
from sphere_engine.metrics.positive_ranks.search import Search
from sphere_engine.metrics.precision_sums import harmonic_numbers


def score_and_count(search: Search, ids: np.ndarray, r: int, first: int, guess: int) -> RankedBlock:
    """Nearest neighbours and positives' ranks of a block of queries of one class."""
    scores, mask = search.buffer()
    block = np.ascontiguousarray(search.queries[ids])
    scores = scores[: ids.size]
    # Each thread runs its own single-threaded sgemm (``ranked_blocks`` limits BLAS to
    # one thread): no BLAS worker spinning while the numpy passes below run.
    np.matmul(block, search.by_class_t, out=scores)
    if search.metric == "euclidean":  # negated squared distance, as ``score_rows``
        scores *= 2
        scores -= search.by_class_sq[None, :]
        scores -= (block * block).sum(1)[:, None]
    if search.exclude_self:
        scores[np.arange(ids.size), search.position[ids]] = -np.inf

    k, fetch = search.k, search.fetch
    nearest = None
    if k > r:  # the counting's candidates hold the k nearest only for k ≤ R
        top_scores, top_columns = torch.topk(torch.from_numpy(scores), fetch, dim=1)
        top_scores, nearest = sort_rows(top_scores.numpy(), search.order[top_columns.numpy()])
        if fetch > k:
            tied = np.flatnonzero(top_scores[:, k - 1] == top_scores[:, k])
            nearest = nearest[:, :k].copy()
            if tied.size:
                _, nearest[tied] = exact_rows(
                    block[tied], ids[tied], search.reference, k, search.exclude_self,
                    search.metric,
                )  # fmt: skip

    width = r + int(search.exclude_self)  # the class's columns, the query's own included
    positive_scores = scores[:, first : first + width].copy()
    scores[:, first : first + width] = -np.inf  # what is left: the negatives
    # The query's own −inf sorts first and is dropped.
    sorted_positives = np.sort(positive_scores, axis=1)[:, width - r :]
    part = Part(
        scores, positive_scores, sorted_positives, search.order[first : first + width],
        search.order,
    )  # fmt: skip
    harmonic = harmonic_numbers(r)
    counted, hits, precision_sum = count_part(
        part, k, guess, harmonic, search.candidate_cap, mask[: ids.size]
    )
    return RankedBlock(ids, counted if nearest is None else nearest, hits, precision_sum)
