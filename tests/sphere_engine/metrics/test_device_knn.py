"""The device backends: selection, and the torch-cuda search and k-means run on the CPU
against faiss's exact results (ties, leave-one-out, streamed reference blocks)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sphere_engine.metrics import backend as backends
from sphere_engine.metrics import clustering_metrics, neighbors, ranked_neighbors
from sphere_engine.metrics.device_kmeans import device_kmeans_labels
from sphere_engine.metrics.device_knn import DeviceSearcher, order_keys
from sphere_engine.metrics.information import information_scores


@pytest.fixture(autouse=True)
def device_on_cpu(monkeypatch):
    monkeypatch.setattr(backends, "TORCH_DEVICE", "cpu")


def ranking(x, reference, k, exclude_self, backend, metric="cosine", budget=256.0):
    rows = x.shape[0]
    indices = np.full((rows, k), -1)
    scores = np.full((rows, k), np.nan, dtype=np.float32)
    for chunk in ranked_neighbors(
        x, reference, k, exclude_self=exclude_self, backend=backend, metric=metric,
        memory_budget_mb=budget,
    ):  # fmt: skip
        indices[chunk.queries], scores[chunk.queries] = chunk.indices, chunk.scores
    return indices, scores


@pytest.mark.parametrize(
    ("faiss_importable", "gpus", "cuda", "expected"),
    [
        (True, 1, True, "faiss-gpu"),
        (True, 0, True, "torch-cuda"),
        (False, 0, True, "torch-cuda"),
        (True, 0, False, "faiss"),
        (False, 0, False, "torch"),
        (False, 2, False, "torch"),  # GPUs without faiss do not make faiss-gpu
    ],
)
def test_auto_choice_follows_what_is_present(faiss_importable, gpus, cuda, expected):
    assert backends.choose_backend(faiss_importable, gpus, cuda) == expected


def test_unusable_backends_are_refused_by_name(monkeypatch):
    assert backends.faiss_gpus() == 0  # this machine's faiss is CPU-only
    with pytest.raises(ValueError, match="'faiss-gpu' was requested but faiss sees no GPU"):
        backends.resolve_backend("faiss-gpu")
    with pytest.raises(ValueError, match="knn backend must be one of"):
        backends.resolve_backend("cuda")
    monkeypatch.setattr(backends, "TORCH_DEVICE", "cuda")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="torch sees no CUDA device"):
            backends.resolve_backend("torch-cuda")
        assert backends.resolve_backend("auto") == "faiss"


def test_keys_order_scores_descending_then_index_ascending():
    values = torch.tensor([[0.5, -0.0, 0.0, -1.5, float("-inf"), 0.5, -1e-30, 3.0]])
    columns = torch.arange(values.shape[1])[None, :]
    order = torch.sort(order_keys(values, columns), dim=1, descending=True).indices[0]
    expected = sorted(range(8), key=lambda i: (-float(values[0, i]) + 0.0, i))
    assert order.tolist() == expected


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
@pytest.mark.parametrize("k", [1, 5, 30])
def test_ties_and_self_exclusion_match_faiss_exactly(make_sparse_signs, metric, k):
    x = make_sparse_signs(200, 6, seed=3) / 2  # exact ±0.5 entries: many exactly tied scores
    x[50:60] = x[40]  # duplicates of a query: still retrieved, by index
    expected = ranking(x, x, k, True, "faiss", metric)
    found = ranking(x, x, k, True, "torch-cuda", metric)
    np.testing.assert_array_equal(found[0], expected[0])
    np.testing.assert_array_equal(found[1], expected[1])


def test_streamed_reference_blocks_give_the_same_ranking(make_sparse_signs):
    x = make_sparse_signs(300, 8, seed=5) / 2
    searcher = DeviceSearcher(x, "cosine", "cpu", budget_bytes=16_000)  # < 2 × 9.6 kB
    assert not searcher.resident and len(searcher.blocks) > 1
    for exclude_self in (True, False):
        expected = ranking(x, x, 12, exclude_self, "faiss")
        streamed = ranking(x, x, 12, exclude_self, "torch-cuda", budget=0.015)
        np.testing.assert_array_equal(streamed[0], expected[0])
        np.testing.assert_array_equal(streamed[1], expected[1])


def test_blocks_smaller_than_the_list_merge_to_the_same_ranking(make_sparse_signs):
    x = make_sparse_signs(120, 6, seed=9) / 2
    searcher = DeviceSearcher(x, "cosine", "cpu", budget_bytes=1_920)  # blocks of 20 rows
    assert 2 * searcher.block_rows < 61  # two blocks hold fewer than the k + 1 fetched
    scores, indices = searcher.ranked(x, np.arange(120), 60, True)
    expected = ranking(x, x, 60, True, "faiss")
    np.testing.assert_array_equal(indices, expected[0])
    np.testing.assert_array_equal(scores, expected[1])


def test_query_gallery_search_matches_faiss(make_clustered):
    x, _ = make_clustered(5, 40, 8, spread=0.3, seed=2)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    queries, gallery = x[:70], x[70:]
    expected = ranking(queries, gallery, 9, False, "faiss")
    found = ranking(queries, gallery, 9, False, "torch-cuda")
    np.testing.assert_array_equal(found[0], expected[0])
    np.testing.assert_allclose(found[1], expected[1], atol=1e-6)


@pytest.mark.parametrize("limit", [2048, 8])
def test_faiss_gpu_routing_gives_the_same_ranking(monkeypatch, make_sparse_signs, limit):
    # The faiss-gpu searcher's routing, with the parts a GPU would hold built on the CPU:
    # faiss's flat index (GpuIndexFlat has the same search call) and the device search.
    # Lists within FAISS_GPU_MAX_K go to faiss, longer ones to the device search.
    monkeypatch.setattr(neighbors, "FAISS_GPU_MAX_K", limit)
    x = make_sparse_signs(150, 6, seed=7) / 2
    device_search = DeviceSearcher(x, "cosine", "cpu", budget_bytes=1 << 20)
    searcher = neighbors._FaissGpuSearcher(
        x, "cosine", 1.0, device_search, neighbors.flat_index(x, "cosine")
    )
    assert (searcher.chunk_rows(20) == device_search.chunk_rows(20)) == (limit == 8)
    ids = np.arange(150)
    scores, indices = searcher.ranked(x, ids, 20, True)
    expected = ranking(x, x, 20, True, "faiss")
    np.testing.assert_array_equal(indices, expected[0])
    np.testing.assert_array_equal(scores, expected[1])


def reference_kmeans(x, clusters, train_count, iterations, seed):
    """The recipe of ``device_kmeans.py`` in plain float64 numpy (full distance tables)."""
    rng = np.random.default_rng(seed)
    train = x[np.sort(rng.choice(len(x), train_count, replace=False))].astype(np.float64)
    centres = train[rng.choice(train_count, clusters, replace=False)]
    for _ in range(iterations):
        nearest = ((train[:, None] - centres[None]) ** 2).sum(-1).argmin(1)
        for c in range(clusters):
            if (nearest == c).any():
                centres[c] = train[nearest == c].mean(0)
    return ((x[:, None] - centres[None]) ** 2).sum(-1).argmin(1)


def test_device_kmeans_follows_the_seeded_recipe(make_clustered):
    x, y = make_clustered(8, 60, 16, spread=0.1, seed=1)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    options = {"train_count": 400, "iterations": 10, "seed": 3, "device": "cpu"}
    first = device_kmeans_labels(x, 8, **options)
    again = device_kmeans_labels(x, 8, **options, memory_budget_mb=0.001)  # tiny chunks
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(first, reference_kmeans(x, 8, 400, 10, 3))
    assert information_scores(y, first)["nmi"] > 0.5  # found structure, not noise


def test_sampled_clustering_runs_on_the_device_above_the_exact_limit(monkeypatch, make_clustered):
    from sphere_engine.metrics import clustering

    monkeypatch.setattr(clustering, "EXACT_MAX_POINTS", 100)
    x, y = make_clustered(4, 60, 8, spread=0.05, seed=4)
    result = clustering_metrics(x, y, backend="torch-cuda")
    assert result["clustering/train_points"] == 240.0
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    expected = information_scores(y, reference_kmeans(unit, 4, 240, 20, 0))
    assert result["nmi"] == pytest.approx(expected["nmi"], abs=1e-12)
