"""Clustering quality: NMI, AMI and pairwise F1 of k-means clusters (k = classes).

NMI and AMI are scikit-learn's (arithmetic normalisation). Pairwise F1 counts pairs
from the contingency table with C(n, 2) sums, never by enumerating pairs:
precision = pairs sharing cluster and label / pairs sharing a cluster, recall = the
same / pairs sharing a label.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.cluster import AgglomerativeClustering
from sklearn.metrics import adjusted_mutual_info_score, normalized_mutual_info_score
from sklearn.metrics.cluster import contingency_matrix

from sphere_engine.metrics.inputs import check_labels, check_pair, l2_normalize, to_numpy
from sphere_engine.metrics.kmeans import kmeans_labels

AGGLOMERATIVE_MAX_POINTS = 10_000
LINKAGES = ("ward", "average", "complete", "single")


def _pairs(counts: np.ndarray) -> float:
    """Σ C(n, 2) over counts (float64, exact for any realistic N)."""
    counts = np.asarray(counts, dtype=np.float64)
    return float((counts * (counts - 1) / 2).sum())


def _check_assignment(labels: Any, clusters: Any) -> tuple[np.ndarray, np.ndarray]:
    array = to_numpy(labels, "labels")
    true = check_labels(array, array.shape[0] if array.ndim else 0, "labels")
    predicted = check_labels(clusters, true.size, "clusters")
    return true, predicted


def pairwise_f1(labels: Any, clusters: Any) -> float:
    """Pairwise clustering F1 of N cluster ids against N class labels (0 if undefined)."""
    true, predicted = _check_assignment(labels, clusters)
    table = contingency_matrix(true, predicted, sparse=True)
    both = _pairs(table.data)
    same_cluster = _pairs(np.bincount(np.unique(predicted, return_inverse=True)[1]))
    same_label = _pairs(np.bincount(np.unique(true, return_inverse=True)[1]))
    if both == 0:
        return 0.0
    precision, recall = both / same_cluster, both / same_label
    return 2 * precision * recall / (precision + recall)


def nmi(labels: Any, clusters: Any) -> float:
    """Normalised mutual information of N cluster ids against N class labels."""
    true, predicted = _check_assignment(labels, clusters)
    return float(normalized_mutual_info_score(true, predicted))


def ami(labels: Any, clusters: Any) -> float:
    """Adjusted mutual information of N cluster ids against N class labels."""
    true, predicted = _check_assignment(labels, clusters)
    return float(adjusted_mutual_info_score(true, predicted))


def clustering_metrics(
    embeddings: Any,
    labels: Any,
    *,
    normalize: bool = True,
    seed: int = 0,
    backend: str = "auto",
) -> dict[str, float]:
    """``nmi``, ``ami``, ``f1`` of seeded k-means (k = number of classes) on all N × d points."""
    points, true = check_pair(embeddings, labels)
    if normalize:
        points = l2_normalize(points)
    return clustering_scores(points, true, seed=seed, backend=backend)


def clustering_scores(
    points: np.ndarray, labels: np.ndarray, *, seed: int = 0, backend: str = "auto"
) -> dict[str, float]:
    """``clustering_metrics`` on already-checked (and normalised) arrays."""
    num_classes = np.unique(labels).size
    clusters = kmeans_labels(points, num_classes, seed=seed, backend=backend)
    return {
        "nmi": float(normalized_mutual_info_score(labels, clusters)),
        "ami": float(adjusted_mutual_info_score(labels, clusters)),
        "f1": pairwise_f1(labels, clusters),
    }


def agglomerative_nmi(
    embeddings: Any,
    labels: Any,
    *,
    normalize: bool = True,
    linkage: str = "ward",
    max_points: int = AGGLOMERATIVE_MAX_POINTS,
    seed: int = 0,
) -> dict[str, float]:
    """NMI of agglomerative clustering (k = number of classes) of N × d embeddings.

    Agglomerative clustering needs O(N²) memory, so above ``max_points`` it runs on a
    uniform random subsample of that size drawn with ``seed``; the result reports the
    points used: ``{"agglomerative_nmi": ..., "agglomerative/points": ...}``.
    """
    points, true = check_pair(embeddings, labels)
    if linkage not in LINKAGES:
        raise ValueError(f"linkage must be one of {list(LINKAGES)}; got {linkage!r}")
    if max_points < 2:
        raise ValueError(f"max_points must be at least 2; got {max_points}")
    if normalize:
        points = l2_normalize(points)
    if points.shape[0] > max_points:
        keep = np.sort(np.random.default_rng(seed).choice(points.shape[0], max_points, False))
        points, true = points[keep], true[keep]
    num_classes = np.unique(true).size
    clusters = AgglomerativeClustering(n_clusters=num_classes, linkage=linkage).fit_predict(points)
    return {
        "agglomerative_nmi": float(normalized_mutual_info_score(true, clusters)),
        "agglomerative/points": float(points.shape[0]),
    }
