"""Seeded k-means: reproducible, all points used, same clusters on both backends."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import normalized_mutual_info_score

from sphere_engine.metrics import backend as backends
from sphere_engine.metrics import kmeans_labels
from sphere_engine.metrics.kmeans import kmeans_plus_plus


@pytest.mark.parametrize("backend", ["faiss", "torch"])
def test_same_seed_same_clusters(blobs, backend):
    x, _ = blobs
    first = kmeans_labels(x, 6, seed=3, backend=backend)
    np.testing.assert_array_equal(first, kmeans_labels(x, 6, seed=3, backend=backend))
    assert first.dtype == np.int64 and set(first) == set(range(6))


def test_backends_find_identical_clusters_on_overlapping_blobs(blobs):
    x, y = blobs
    faiss_clusters = kmeans_labels(x, 6, seed=0, backend="faiss")
    sklearn_clusters = kmeans_labels(x, 6, seed=0, backend="torch")
    np.testing.assert_array_equal(faiss_clusters, sklearn_clusters)
    assert 0.3 < normalized_mutual_info_score(y, faiss_clusters) < 1.0  # not trivial data


def test_faiss_is_told_to_use_every_point(monkeypatch, make_clustered):
    seen = {}
    original = backends.faiss.Kmeans

    def spy(d, k, **kwargs):
        seen.update(kwargs)
        return original(d, k, **kwargs)

    monkeypatch.setattr(backends.faiss, "Kmeans", spy)
    x, _ = make_clustered(2, 600, 4, spread=0.5)  # 1200 points > 256 per centroid × 2
    clusters = kmeans_labels(x, 2, backend="faiss")
    assert seen["max_points_per_centroid"] >= len(x)
    # A 512-point subsample would move the centres; scikit-learn uses every point.
    np.testing.assert_array_equal(clusters, kmeans_labels(x, 2, backend="torch"))


@pytest.mark.parametrize("clusters", [0, 301])
def test_cluster_count_must_fit_the_points(blobs, clusters):
    with pytest.raises(ValueError, match="num_clusters must be between 1 and"):
        kmeans_labels(blobs[0], clusters)


def test_kmeans_plus_plus_is_seeded_and_spreads_over_the_blobs(make_clustered):
    x, y = make_clustered(5, 40, 8, spread=0.02, seed=6)
    first = kmeans_plus_plus(x, 5, seed=1)
    np.testing.assert_array_equal(first, kmeans_plus_plus(x, 5, seed=1))
    rows = [int(np.flatnonzero((x == centre).all(axis=1))[0]) for centre in first]
    assert sorted(y[rows]) == [0, 1, 2, 3, 4]  # one starting centre in each blob


def test_benchmark_scale_sets_train_faiss_kmeans_on_a_stated_sample():
    from sphere_engine.metrics.clustering import clustering_scores
    from sphere_engine.metrics.kmeans import EXACT_MAX_POINTS

    rng = np.random.default_rng(0)
    centres = np.eye(8, dtype=np.float32)[:4]
    labels = rng.integers(0, 4, EXACT_MAX_POINTS + 4000)
    points = centres[labels] + 0.01 * rng.standard_normal((labels.size, 8)).astype(np.float32)
    result = clustering_scores(points, labels, seed=1)
    assert result["clustering/train_points"] == 4 * 256  # 256 per centroid, not all N
    assert result["nmi"] == pytest.approx(1.0) and result["f1"] == pytest.approx(1.0)
    small = clustering_scores(points[:500], labels[:500], seed=1)
    assert "clustering/train_points" not in small  # exact k-means on every point


def test_faiss_calls_take_large_query_chunks_within_the_budget():
    from sphere_engine.metrics.neighbors import _chunk_rows

    # faiss scores in its own tiles: a 200k reference does not shrink the chunk
    assert _chunk_rows(200_000, 100, 256.0, "faiss") >= 16_384
    assert _chunk_rows(200_000, 100, 256.0, "torch") < 400  # one score row per query
    assert _chunk_rows(200_000, 100, 0.01, "faiss") < 10


def test_exact_kmeans_runs_faiss_on_one_thread_and_restores_it(monkeypatch, make_clustered):
    # Lloyd steps on an evaluation-sized set are tiny: with two OpenMP threads the
    # idle one spins at every barrier (0.39 vs 0.09 s CPU at 10k × 128 / 100 classes).
    faiss = backends.faiss
    seen = []
    original = faiss.Kmeans.train

    def train(self, *args, **kwargs):
        seen.append(faiss.omp_get_max_threads())
        return original(self, *args, **kwargs)

    monkeypatch.setattr(faiss.Kmeans, "train", train)
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(2)
    try:
        x, _ = make_clustered(3, 50, 4, spread=0.3)
        kmeans_labels(x, 3, backend="faiss")
        assert seen and set(seen) == {1}
        assert faiss.omp_get_max_threads() == 2
    finally:
        faiss.omp_set_num_threads(before)
