"""Clustering quality: NMI, AMI and pairwise F1 of k-means clusters (k = classes).

NMI and AMI as scikit-learn defines them (arithmetic normalisation), computed with
the pairwise F1 from one contingency table (``information.py``: the same values,
without scikit-learn's ~55 ms expected-MI loop at 100 classes). Pairwise F1 counts
pairs from the table with C(n, 2) sums, never by enumerating pairs: precision = pairs
sharing cluster and label / pairs sharing a cluster, recall = the same / pairs sharing
a label.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.cluster import AgglomerativeClustering

from sphere_engine.metrics import backend as backends
from sphere_engine.metrics.information import information_scores
from sphere_engine.metrics.inputs import check_labels, check_pair, l2_normalize, to_numpy
from sphere_engine.metrics.kmeans import (
    EXACT_MAX_POINTS,
    kmeans_labels,
    sampled_kmeans_labels,
    sampled_training_points,
)

AGGLOMERATIVE_MAX_POINTS = 10_000
LINKAGES = ("ward", "average", "complete", "single")


def _check_assignment(labels: Any, clusters: Any) -> tuple[np.ndarray, np.ndarray]:
    array = to_numpy(labels, "labels")
    true = check_labels(array, array.shape[0] if array.ndim else 0, "labels")
    predicted = check_labels(clusters, true.size, "clusters")
    return true, predicted


def pairwise_f1(labels: Any, clusters: Any) -> float:
    """Pairwise clustering F1 of N cluster ids against N class labels (0 if undefined)."""
    return information_scores(*_check_assignment(labels, clusters))["f1"]


def nmi(labels: Any, clusters: Any) -> float:
    """Normalised mutual information of N cluster ids against N class labels."""
    return information_scores(*_check_assignment(labels, clusters))["nmi"]


def ami(labels: Any, clusters: Any) -> float:
    """Adjusted mutual information of N cluster ids against N class labels."""
    return information_scores(*_check_assignment(labels, clusters))["ami"]


def clustering_metrics(
    embeddings: Any,
    labels: Any,
    *,
    normalize: bool = True,
    seed: int = 0,
    backend: str = "auto",
) -> dict[str, float]:
    """``nmi``, ``ami``, ``f1`` of seeded k-means (k = number of classes) of N × d points
    (sampled training above ``EXACT_MAX_POINTS``: see ``clustering_scores``)."""
    points, true = check_pair(embeddings, labels)
    if normalize:
        points = l2_normalize(points)
    return clustering_scores(points, true, seed=seed, backend=backend)


def clustering_scores(
    points: np.ndarray, labels: np.ndarray, *, seed: int = 0, backend: str = "auto"
) -> dict[str, float]:
    """``clustering_metrics`` on already-checked (and normalised) arrays.

    Up to ``EXACT_MAX_POINTS`` points (or with the ``torch`` backend): seeded k-means++
    and Lloyd to convergence on all points; above: k-means of the backend (faiss on the
    CPU or GPU, torch on the device) trained on a seeded sample, every
    point assigned (``kmeans.py``), adding ``clustering/train_points`` (how many it
    trained on). NMI, AMI and F1 are always over all N points.
    """
    num_classes = np.unique(labels).size
    count = points.shape[0]
    chosen = backends.resolve_backend(backend)
    if count > EXACT_MAX_POINTS and chosen != "torch":
        clusters = sampled_kmeans_labels(points, num_classes, seed=seed, backend=chosen)
        trained = float(sampled_training_points(count, num_classes))
        return information_scores(labels, clusters) | {"clustering/train_points": trained}
    clusters = kmeans_labels(points, num_classes, seed=seed, backend=chosen)
    return information_scores(labels, clusters)


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
        "agglomerative_nmi": information_scores(true, clusters)["nmi"],
        "agglomerative/points": float(points.shape[0]),
    }
