"""Chunked exact neighbour search: ranking rule, self exclusion, chunking, errors."""

from __future__ import annotations

import numpy as np
import pytest

from sphere_engine.metrics import backend as backends
from sphere_engine.metrics import neighbors, ranked_neighbors

BACKENDS = ("faiss", "torch", "torch-cuda")


@pytest.fixture(autouse=True)
def device_on_cpu(monkeypatch):
    """The torch-cuda backend's code, run on the CPU (``backend.TORCH_DEVICE``)."""
    monkeypatch.setattr(backends, "TORCH_DEVICE", "cpu")


def collect(chunks, num_queries):
    """Stack chunk rows back into query order: (indices, scores), each Q × k."""
    chunks = list(chunks)
    width = max(chunk.indices.shape[1] for chunk in chunks)
    indices = np.full((num_queries, width), -1)
    scores = np.full((num_queries, width), np.nan)
    for chunk in chunks:
        indices[chunk.queries, : chunk.indices.shape[1]] = chunk.indices
        scores[chunk.queries, : chunk.scores.shape[1]] = chunk.scores
    return indices, scores, len(chunks)


def brute_ranking(x, k, exclude_self):
    scores = x.astype(np.float64) @ x.astype(np.float64).T
    rows = []
    for i in range(x.shape[0]):
        candidates = np.arange(x.shape[0])
        if exclude_self:
            candidates = candidates[candidates != i]
        rows.append(candidates[np.lexsort((candidates, -scores[i, candidates]))][:k])
    return np.array(rows)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", [1, 3, 7])
def test_ties_at_the_cut_are_resolved_by_index(make_sparse_signs, backend, k):
    x = make_sparse_signs(120, 6, seed=2) / 2  # exact ±0.5 entries: scores tie a lot
    indices, scores, _ = collect(ranked_neighbors(x, x, k, exclude_self=True, backend=backend), 120)
    np.testing.assert_array_equal(indices, brute_ranking(x, k, True))
    assert (np.diff(scores, axis=1) <= 0).all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_self_is_excluded_even_among_many_duplicates(backend):
    x = np.tile(np.array([[0.6, 0.8]], dtype=np.float32), (10, 1))
    indices, _, _ = collect(ranked_neighbors(x, x, 2, exclude_self=True, backend=backend), 10)
    expected = np.array([[j for j in range(10) if j != i][:2] for i in range(10)])
    np.testing.assert_array_equal(indices, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tiny_budget_splits_into_chunks_with_identical_results(blobs, backend):
    x, _ = blobs
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    whole = collect(ranked_neighbors(x, x, 20, exclude_self=True, backend=backend), len(x))
    split = collect(
        ranked_neighbors(x, x, 20, exclude_self=True, backend=backend, memory_budget_mb=0.01),
        len(x),
    )
    assert whole[2] == 1 and split[2] > 10
    np.testing.assert_array_equal(whole[0], split[0])


def test_per_query_k_and_query_subset():
    x = np.eye(6, dtype=np.float32)
    rows = np.array([4, 1])
    chunks = list(ranked_neighbors(x, x, np.array([2, 5]), exclude_self=True, query_rows=rows))
    assert sorted(int(q) for chunk in chunks for q in chunk.queries) == [1, 4]
    assert max(chunk.indices.shape[1] for chunk in chunks) == 5  # k clipped to N - 1


def test_reference_search_keeps_every_row():
    x = np.eye(3, dtype=np.float32)
    indices, _, _ = collect(ranked_neighbors(x, x, 1, exclude_self=False), 3)
    np.testing.assert_array_equal(indices[:, 0], [0, 1, 2])  # each finds its copy


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"metric": "manhattan"}, "metric must be one of"),
        ({"k": 0}, "k must be at least 1"),
        ({"reference": np.zeros((4, 3), np.float32), "exclude_self": False}, "dimension"),
        ({"reference": np.zeros((5, 2), np.float32)}, "same rows"),
    ],
)
def test_bad_arguments(kwargs, message):
    x = np.eye(4, 2, dtype=np.float32)
    arguments = {"queries": x, "reference": x, "k": 1, "exclude_self": True} | kwargs
    with pytest.raises(ValueError, match=message):
        list(ranked_neighbors(**arguments))


def test_long_lists_under_the_faiss_backend_give_the_same_ranking(monkeypatch, make_sparse_signs):
    x = make_sparse_signs(150, 6, seed=4) / 2
    short = collect(ranked_neighbors(x, x, 40, exclude_self=True, backend="faiss"), 150)
    monkeypatch.setattr(neighbors, "FAISS_MAX_K", 8)  # k = 40 now goes through topk
    long = collect(ranked_neighbors(x, x, 40, exclude_self=True, backend="faiss"), 150)
    np.testing.assert_array_equal(short[0], long[0])
    np.testing.assert_array_equal(short[0], brute_ranking(x, 40, True))


def test_cpu_faiss_search_runs_one_single_threaded_part_per_core(monkeypatch):
    faiss = backends.faiss
    rng = np.random.default_rng(5)
    reference = rng.standard_normal((300, 16)).astype(np.float32)
    queries = rng.standard_normal((3000, 16)).astype(np.float32)
    index = neighbors.flat_index(reference, "euclidean")
    seen: list[tuple[int, int]] = []

    class Recording:
        def search(self, rows, k):
            seen.append((rows.shape[0], faiss.omp_get_max_threads()))
            return index.search(rows, k)

    monkeypatch.setattr(neighbors.os, "sched_getaffinity", lambda pid: {0, 1})
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(2)
    try:
        scores, found = neighbors.search_on_every_core(Recording(), queries, 5)
        assert faiss.omp_get_max_threads() == 2  # this thread's setting is untouched
    finally:
        faiss.omp_set_num_threads(before)
    expected_scores, expected = index.search(queries, 5)
    np.testing.assert_array_equal(found, expected)
    np.testing.assert_array_equal(scores, expected_scores)
    assert sorted(seen) == [(1500, 1), (1500, 1)]
