"""evaluate_embeddings: the keys, how options change them, and consistency."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sphere_engine.metrics import (
    alignment,
    angular_separation,
    clustering_metrics,
    evaluate_embeddings,
    hyperspherical_energy,
    norm_statistics,
    retrieval_metrics,
    uniformity,
)

REQUIRED = [
    "recall@1", "recall@2", "recall@4", "recall@8", "precision@1", "r_precision", "map@r",
    "knn_accuracy", "retrieval/queries_skipped", "nmi", "ami", "f1", "norm/mean", "norm/var",
    "norm/std", "norm/cv", "norm/min", "norm/max", "angle/inter_min", "angle/inter_mean",
    "angle/simplex_bound", "angle/intra_mean", "angle/intra_over_inter", "uniformity",
    "alignment", "hyperspherical_energy",
]  # fmt: skip


def test_all_required_keys_are_floats_and_agree_with_the_single_functions(blobs):
    x, y = blobs
    result = evaluate_embeddings(x, y)
    assert set(REQUIRED) <= result.keys()
    assert all(type(value) is float for value in result.values())
    assert "agglomerative_nmi" not in result
    expected = retrieval_metrics(x, y) | clustering_metrics(x, y) | norm_statistics(x)
    expected |= angular_separation(x, y)
    expected |= {"alignment": alignment(x, y), "uniformity": uniformity(x)}
    for name, value in expected.items():
        assert result[name] == pytest.approx(value, abs=1e-12), name


def test_energy_is_of_the_class_centroids(blobs):
    x, y = blobs
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    centroids = np.stack([unit[y == c].mean(axis=0) for c in range(6)])
    result = evaluate_embeddings(x, y, clustering=False)
    assert result["hyperspherical_energy"] == pytest.approx(
        hyperspherical_energy(centroids), abs=1e-6
    )
    assert "nmi" not in result


def test_norms_use_the_raw_input_and_the_rest_ignores_scale(blobs):
    x, y = blobs
    base, scaled = evaluate_embeddings(x, y), evaluate_embeddings(10 * x, y)
    assert scaled["norm/mean"] == pytest.approx(10 * base["norm/mean"], rel=1e-6)
    for name in ("map@r", "nmi", "angle/inter_min", "uniformity", "alignment"):
        assert scaled[name] == pytest.approx(base[name], abs=1e-6), name


def test_unnormalised_retrieval_uses_euclidean_distance():
    # Same direction, different lengths: cosine cannot tell classes apart, distance can.
    x = np.array([[1.0, 0.0], [1.1, 0.0], [5.0, 0.0], [5.2, 0.0], [0.0, 1.0], [0.0, 1.2]])
    y = np.array([0, 0, 1, 1, 2, 2])
    assert evaluate_embeddings(x, y, normalize=False, clustering=False)["map@r"] == 1.0
    assert evaluate_embeddings(x, y, clustering=False)["map@r"] < 1.0


def test_options_add_keys_and_seed_is_reproducible(blobs):
    x, y = blobs
    result = evaluate_embeddings(x, y, ks=(1, 16), agglomerative=True, seed=5)
    assert {"recall@16", "agglomerative_nmi", "agglomerative/points"} <= result.keys()
    assert "recall@2" not in result
    assert result == evaluate_embeddings(x, y, ks=(1, 16), agglomerative=True, seed=5)


def test_reference_set_changes_retrieval_only(blobs):
    x, y = blobs
    queries, labels, ref, ref_labels = x[::2], y[::2], x[1::2], y[1::2]
    result = evaluate_embeddings(queries, labels, reference=ref, reference_labels=ref_labels)
    alone = evaluate_embeddings(queries, labels)
    expected = retrieval_metrics(queries, labels, reference=ref, reference_labels=ref_labels)
    assert result["map@r"] == pytest.approx(expected["map@r"], abs=1e-12)
    assert result["map@r"] != pytest.approx(alone["map@r"], abs=1e-3)
    assert result["retrieval/max_r"] == 25  # all 25 reference samples of the class
    assert result["norm/mean"] == alone["norm/mean"] and result["nmi"] == alone["nmi"]


def test_torch_input_on_any_device_gives_the_numpy_result(blobs):
    x, y = blobs
    device = "cuda" if torch.cuda.is_available() else "cpu"
    tensors = torch.from_numpy(x).to(device), torch.from_numpy(y).to(device)
    assert evaluate_embeddings(*tensors) == evaluate_embeddings(x, y)


def test_separated_classes_give_perfect_scores(make_clustered):
    x, y = make_clustered(10, 12, 32, spread=0.01)
    result = evaluate_embeddings(x, y, agglomerative=True)
    for name in ("recall@1", "map@r", "r_precision", "knn_accuracy", "nmi", "ami", "f1"):
        assert result[name] == pytest.approx(1.0, abs=1e-12), name
    assert result["agglomerative_nmi"] == pytest.approx(1.0, abs=1e-12)
    assert result["angle/intra_mean"] < 5.0 and result["angle/inter_min"] > 45.0
