"""Evaluation metrics and geometry diagnostics of embedding sets (pure functions)."""

from sphere_engine.geometry import class_centroids
from sphere_engine.metrics.analysis import analysis_metrics, load_query_gallery
from sphere_engine.metrics.angles import angular_separation, vertex_alignment
from sphere_engine.metrics.backend import BACKENDS, resolve_backend
from sphere_engine.metrics.clustering import (
    agglomerative_nmi,
    ami,
    clustering_metrics,
    nmi,
    pairwise_f1,
)
from sphere_engine.metrics.effective_rank import effective_rank
from sphere_engine.metrics.embedding_files import (
    LabelledEmbeddings,
    load_embeddings_file,
    load_labelled_embeddings,
)
from sphere_engine.metrics.evaluate import evaluate_embeddings
from sphere_engine.metrics.hypersphere import alignment, hyperspherical_energy, uniformity
from sphere_engine.metrics.kmeans import kmeans_labels
from sphere_engine.metrics.linear_probe import linear_probe_accuracy
from sphere_engine.metrics.neighbors import NeighborChunk, ranked_neighbors
from sphere_engine.metrics.norms import norm_statistics
from sphere_engine.metrics.query_gallery import (
    query_gallery_metrics,
    retrieval_protocol_metrics,
    split_query_gallery,
)
from sphere_engine.metrics.retrieval import (
    knn_accuracy,
    map_at_r,
    precision_at_1,
    r_precision,
    recall_at_k,
    retrieval_metrics,
)
from sphere_engine.metrics.softmax_clustering import softmax_clustering_metrics
from sphere_engine.metrics.verification import (
    verification_roc,
    verification_scores,
    verification_scores_and_roc,
)

__all__ = [
    "BACKENDS",
    "LabelledEmbeddings",
    "NeighborChunk",
    "agglomerative_nmi",
    "alignment",
    "ami",
    "analysis_metrics",
    "angular_separation",
    "class_centroids",
    "clustering_metrics",
    "effective_rank",
    "evaluate_embeddings",
    "hyperspherical_energy",
    "kmeans_labels",
    "knn_accuracy",
    "linear_probe_accuracy",
    "load_embeddings_file",
    "load_labelled_embeddings",
    "load_query_gallery",
    "map_at_r",
    "nmi",
    "norm_statistics",
    "pairwise_f1",
    "precision_at_1",
    "query_gallery_metrics",
    "r_precision",
    "ranked_neighbors",
    "recall_at_k",
    "resolve_backend",
    "retrieval_metrics",
    "retrieval_protocol_metrics",
    "softmax_clustering_metrics",
    "split_query_gallery",
    "uniformity",
    "verification_roc",
    "verification_scores",
    "verification_scores_and_roc",
    "vertex_alignment",
]
