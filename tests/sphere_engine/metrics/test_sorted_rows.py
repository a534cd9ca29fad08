"""sorted_rows: the (row, value) keys, and the one search over all rows they allow."""

from __future__ import annotations

import numpy as np

from sphere_engine.metrics.sorted_rows import positions_right, row_keys


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
    keys = row_keys(values, rows)
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
    # What positive_ranks relies on: positives sorted per row, candidates grouped
    # by row; "right" positions, ties included, as numpy's per-row float search.
    rng = np.random.default_rng(1)
    positives = np.sort(_awkward_floats(rng, 9 * 31).reshape(9, 31), axis=1)
    counts = rng.integers(0, 40, size=9)
    rows = np.repeat(np.arange(9), counts)
    values = _awkward_floats(rng, rows.size)
    values[::3] = positives[rows[::3], rng.integers(0, 31, size=values[::3].size)]  # ties
    found = positions_right(positives, values, counts)  # 31 wide: the one search
    expected = np.concatenate(
        [np.searchsorted(positives[row], values[rows == row], "right") for row in range(9)]
    )
    assert np.array_equal(found, expected)
