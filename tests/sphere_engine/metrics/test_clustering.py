"""NMI / AMI (scikit-learn parity), pairwise F1 (hand-worked), agglomerative NMI."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from sklearn.metrics import adjusted_mutual_info_score, normalized_mutual_info_score

from sphere_engine.metrics import (
    agglomerative_nmi,
    ami,
    clustering_metrics,
    kmeans_labels,
    nmi,
    pairwise_f1,
)


def pairwise_f1_by_enumeration(labels, clusters):
    both = same_cluster = same_label = 0
    for i, j in combinations(range(len(labels)), 2):
        cluster, label = clusters[i] == clusters[j], labels[i] == labels[j]
        same_cluster += cluster
        same_label += label
        both += cluster and label
    precision, recall = both / same_cluster, both / same_label
    return 2 * precision * recall / (precision + recall)


def test_pairwise_f1_hand_worked():
    # same-cluster pairs 3 + 3 = 6, same-label 6 + 1 = 7, both 3 + 0 + 1 = 4:
    # P = 4/6, R = 4/7, F1 = 2PR/(P+R) = 8/13.
    labels = [0, 0, 0, 0, 1, 1]
    clusters = [0, 0, 0, 1, 1, 1]
    assert pairwise_f1(labels, clusters) == pytest.approx(8 / 13, abs=1e-15)
    assert pairwise_f1([0, 0, 0, 1, 1], [5, 5, 7, 7, 7]) == pytest.approx(0.5, abs=1e-15)


def test_pairwise_f1_matches_enumerating_all_pairs():
    rng = np.random.default_rng(0)
    labels, clusters = rng.integers(0, 5, 200), rng.integers(0, 4, 200)
    expected = pairwise_f1_by_enumeration(labels, clusters)
    assert pairwise_f1(labels, clusters) == pytest.approx(expected, abs=1e-12)


def test_pairwise_f1_edge_cases():
    assert pairwise_f1([0, 1, 2], [0, 1, 2]) == 0.0  # no pair shares a cluster
    assert pairwise_f1([3, 3, 8, 8], [1, 1, 0, 0]) == 1.0  # cluster ids are arbitrary


def test_nmi_and_ami_equal_scikit_learn():
    rng = np.random.default_rng(1)
    labels, clusters = rng.integers(0, 6, 300), rng.integers(0, 6, 300)
    # the same definitions, summed in another order (information.py): equal to rounding
    assert nmi(labels, clusters) == pytest.approx(
        normalized_mutual_info_score(labels, clusters), abs=1e-12
    )
    assert ami(labels, clusters) == pytest.approx(
        adjusted_mutual_info_score(labels, clusters), abs=1e-12
    )


@pytest.mark.parametrize("backend", ["faiss", "torch"])
def test_clustering_metrics_are_scikit_learn_scores_of_the_kmeans_clusters(blobs, backend):
    x, y = blobs
    result = clustering_metrics(x, y, seed=2, backend=backend)
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    clusters = kmeans_labels(unit.astype(np.float32), 6, seed=2, backend=backend)
    assert result["nmi"] == pytest.approx(normalized_mutual_info_score(y, clusters), abs=1e-12)
    assert result["ami"] == pytest.approx(adjusted_mutual_info_score(y, clusters), abs=1e-12)
    assert result["f1"] == pytest.approx(pairwise_f1_by_enumeration(y, clusters), abs=1e-12)
    assert 0.3 < result["nmi"] < 1.0


def test_separated_classes_cluster_perfectly(make_clustered):
    x, y = make_clustered(8, 15, 32, spread=0.02)
    result = clustering_metrics(x, y)
    assert result == pytest.approx({"nmi": 1.0, "ami": 1.0, "f1": 1.0}, abs=1e-12)
    assert agglomerative_nmi(x, y)["agglomerative_nmi"] == pytest.approx(1.0, abs=1e-12)


def test_agglomerative_subsample_is_reported_and_seeded(blobs):
    x, y = blobs
    first = agglomerative_nmi(x, y, max_points=100, seed=4)
    assert first["agglomerative/points"] == 100
    assert first == agglomerative_nmi(x, y, max_points=100, seed=4)
    assert agglomerative_nmi(x, y)["agglomerative/points"] == len(x)


def test_agglomerative_rejects_unknown_linkage(blobs):
    with pytest.raises(ValueError, match="linkage must be one of"):
        agglomerative_nmi(*blobs, linkage="centroid")


def test_cluster_and_label_lengths_must_match():
    with pytest.raises(ValueError, match="lengths must match"):
        pairwise_f1([0, 1, 1], [0, 1])
