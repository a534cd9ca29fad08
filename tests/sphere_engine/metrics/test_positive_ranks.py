"""positive_ranks helpers: the (row, value) keys that locate candidates among positives."""

from __future__ import annotations

import numpy as np

from sphere_engine.metrics.positive_ranks import _row_keys


def _awkward_floats(rng: np.random.Generator, size: int) -> np.ndarray:
    """float32 values with signed zeros, subnormals, extremes and many exact repeats."""
    special = np.array(
        [0.0, -0.0, 1e-45, -1e-45, 1e-38, -1e-38, 3.4e38, -3.4e38, 1.0, -1.0, 0.25, -0.25],
        dtype=np.float32,
    )
    normal = rng.normal(size=size).astype(np.float32)
    return np.where(rng.random(size) < 0.5, rng.choice(special, size=size), normal)


def test_row_keys_order_as_row_then_float_value():
    rng = np.random.default_rng(0)
    values = _awkward_floats(rng, 4000)
    rows = rng.integers(0, 7, size=values.size)
    keys = _row_keys(values, rows)
    order = np.argsort(keys, kind="stable")
    # Sorted by key means sorted by row, then by value (−0.0 and +0.0 equal).
    assert np.all(np.diff(rows[order]) >= 0)
    same_row = rows[order][1:] == rows[order][:-1]
    assert np.all(values[order][1:][same_row] >= values[order][:-1][same_row])
    # Equal keys exactly where the floats are equal (within a row).
    i, j = rng.integers(0, values.size, size=(2, 20000))
    same = rows[i] == rows[j]
    assert np.array_equal((keys[i] == keys[j])[same], (values[i] == values[j])[same])


def test_one_search_over_all_rows_equals_a_search_per_row():
    # What _candidates_above relies on: positives sorted per row, candidates grouped
    # by row; "right" positions, ties included, as numpy's per-row float search.
    rng = np.random.default_rng(1)
    positives = np.sort(_awkward_floats(rng, 9 * 31).reshape(9, 31), axis=1)
    counts = rng.integers(0, 40, size=9)
    rows = np.repeat(np.arange(9), counts)
    values = _awkward_floats(rng, rows.size)
    values[::3] = positives[rows[::3], rng.integers(0, 31, size=values[::3].size)]  # ties
    keys = _row_keys(positives.ravel(), np.repeat(np.arange(9), 31))
    found = np.searchsorted(keys, _row_keys(values, rows), "right") - rows * 31
    expected = np.concatenate(
        [np.searchsorted(positives[row], values[rows == row], "right") for row in range(9)]
    )
    assert np.array_equal(found, expected)


def test_both_searches_give_the_same_ranks(monkeypatch, make_sparse_signs, make_clustered):
    # Small R uses one search over all rows, large R a search per row: forced either
    # way, the results are identical, on exact ties (sign vectors) and on blobs.
    from sphere_engine.metrics import positive_ranks, retrieval, retrieval_metrics

    monkeypatch.setattr(retrieval, "COUNTING_MIN_R", 0)
    rng = np.random.default_rng(2)
    cases = [
        (make_sparse_signs(300, 8, seed=4), rng.integers(0, 3, size=300)),
        make_clustered(5, 60, 12, spread=0.6, seed=3),
    ]
    for x, y in cases:
        results = []
        for largest in (0, 10**6):
            monkeypatch.setattr(positive_ranks, "_ONE_SEARCH_MAX_R", largest)
            results.append(retrieval_metrics(x, y, memory_budget_mb=0.2))
        assert results[0] == results[1]
        assert 0.0 < results[0]["map@r"] < 1.0
