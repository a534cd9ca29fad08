"""Evaluation metrics and geometry diagnostics of embedding sets (pure functions)."""

from sphere_engine.geometry import class_centroids
from sphere_engine.metrics.angles import angular_separation, vertex_alignment
from sphere_engine.metrics.backend import BACKENDS, resolve_backend
from sphere_engine.metrics.clustering import (
    agglomerative_nmi,
    ami,
    clustering_metrics,
    nmi,
    pairwise_f1,
)
from sphere_engine.metrics.embedding_files import load_embeddings_file
from sphere_engine.metrics.evaluate import evaluate_embeddings
from sphere_engine.metrics.hypersphere import alignment, hyperspherical_energy, uniformity
from sphere_engine.metrics.kmeans import kmeans_labels
from sphere_engine.metrics.neighbors import NeighborChunk, ranked_neighbors
from sphere_engine.metrics.norms import norm_statistics
from sphere_engine.metrics.retrieval import (
    knn_accuracy,
    map_at_r,
    precision_at_1,
    r_precision,
    recall_at_k,
    retrieval_metrics,
)

__all__ = [
    "BACKENDS",
    "NeighborChunk",
    "agglomerative_nmi",
    "alignment",
    "ami",
    "angular_separation",
    "class_centroids",
    "clustering_metrics",
    "evaluate_embeddings",
    "hyperspherical_energy",
    "kmeans_labels",
    "knn_accuracy",
    "load_embeddings_file",
    "map_at_r",
    "nmi",
    "norm_statistics",
    "pairwise_f1",
    "precision_at_1",
    "r_precision",
    "ranked_neighbors",
    "recall_at_k",
    "resolve_backend",
    "retrieval_metrics",
    "uniformity",
    "vertex_alignment",
]
