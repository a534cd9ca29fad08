"""``ranked_blocks``: the entry of rank counting (see the package doc)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import torch

from sphere_engine.metrics.positive_ranks.guesses import Guesses
from sphere_engine.metrics.positive_ranks.parts import RankedBlock
from sphere_engine.metrics.positive_ranks.scheduling import class_blocks, run_in_order
from sphere_engine.metrics.positive_ranks.scoring import score_and_count
from sphere_engine.metrics.positive_ranks.search import Search


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
    ``query_labels``): their k nearest and their positives' ranks (see the package doc).

    Arrays as in ``retrieval_scores``; k is clipped to the number of candidates.
    Blocks hold queries of one class; one per thread at a time, each as large as fits
    its share of ``memory_budget_mb`` with its score rows and work arrays (up to
    4 blocks per thread are queued ahead; what they hold is small).
    """
    threads = max(1, torch.get_num_threads())
    search = Search.build(
        queries, reference, reference_labels,
        widest=int(positives[query_rows].max()) + int(exclude_self), queried=query_rows.size,
        exclude_self=exclude_self, k=k, metric=metric,
        budget=int(memory_budget_mb * 2**20) // threads,
    )  # fmt: skip
    guesses = Guesses()

    def run(task: tuple[int, np.ndarray]) -> RankedBlock:
        index, ids = task
        r = int(positives[ids[0]])
        first = search.first_column(query_labels[ids[0]])
        block = score_and_count(search, ids, r, first, guesses.start(index, r))
        guesses.finish(index, r, block)
        return block

    yield from run_in_order(run, class_blocks(query_labels, query_rows, search.rows), threads)
