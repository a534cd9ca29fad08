"""positive_ranks: the one search over all rows and a search per row rank alike."""

from __future__ import annotations

import numpy as np


def test_both_searches_give_the_same_ranks(monkeypatch, make_sparse_signs, make_clustered):
    # Small R uses one search over all rows, large R a search per row: forced either
    # way, the results are identical, on exact ties (sign vectors) and on blobs.
    from sphere_engine.metrics import retrieval, retrieval_metrics, sorted_rows

    monkeypatch.setattr(retrieval, "COUNTING_MIN_R", 0)
    rng = np.random.default_rng(2)
    cases = [
        (make_sparse_signs(300, 8, seed=4), rng.integers(0, 3, size=300)),
        make_clustered(5, 60, 12, spread=0.6, seed=3),
    ]
    for x, y in cases:
        results = []
        for largest in (0, 10**6):
            monkeypatch.setattr(sorted_rows, "ONE_SEARCH_MAX_WIDTH", largest)
            results.append(retrieval_metrics(x, y, memory_budget_mb=0.2))
        assert results[0] == results[1]
        assert 0.0 < results[0]["map@r"] < 1.0
