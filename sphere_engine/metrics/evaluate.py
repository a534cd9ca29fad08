"""``evaluate_embeddings``: every evaluation number of one embedding set in one call."""

from __future__ import annotations

from typing import Any

from sphere_engine.catalogue.facts import DEFAULT_RECALL_KS
from sphere_engine.geometry import class_centroids
from sphere_engine.metrics.angles import angular_separation_scores
from sphere_engine.metrics.backend import resolve_backend
from sphere_engine.metrics.clustering import agglomerative_nmi, clustering_scores
from sphere_engine.metrics.effective_rank import effective_rank_scores
from sphere_engine.metrics.hypersphere import (
    UNIFORMITY_MAX_POINTS,
    alignment_scores,
    hyperspherical_energy_scores,
    subsample,
    uniformity_scores,
)
from sphere_engine.metrics.inputs import check_ks, check_pair, check_reference, l2_normalize
from sphere_engine.metrics.norms import norm_statistics
from sphere_engine.metrics.per_query import QueryCollector
from sphere_engine.metrics.retrieval import KNN_NEIGHBORS, retrieval_scores


def evaluate_embeddings(
    embeddings: Any,
    labels: Any,
    *,
    normalize: bool = True,
    ks: Any = DEFAULT_RECALL_KS,
    clustering: bool = True,
    agglomerative: bool = False,
    seed: int = 0,
    reference: Any = None,
    reference_labels: Any = None,
    backend: str = "auto",
    memory_budget_mb: float = 256.0,
    retrieval: bool = True,
    collector: QueryCollector | None = None,
) -> dict[str, float]:
    """All metrics of N × d embeddings with N labels (numpy arrays or torch tensors).

    Keys (see each module for definitions):
    - retrieval (``retrieval.py``): ``recall@K`` per K in ``ks``, ``precision@1``,
      ``r_precision``, ``map@r``, ``knn_accuracy`` (10 neighbours),
      ``retrieval/queries``, ``retrieval/queries_skipped``, ``retrieval/max_r``;
      queries search ``reference`` (M × d, with ``reference_labels``) when given,
      else all other embeddings;
    - clustering (``clustering.py``, if ``clustering``): ``nmi``, ``ami``, ``f1`` of
      seeded k-means with k = number of classes on all points; with ``agglomerative``
      also ``agglomerative_nmi`` (Ward; on a seeded subsample of 10,000 above that,
      reported as ``agglomerative/points``);
    - norms of the raw input (``norms.py``): ``norm/mean``, ``norm/var``, ``norm/std``,
      ``norm/cv``, ``norm/min``, ``norm/max``;
    - geometry on normalised embeddings (``angles.py``, ``hypersphere.py``):
      ``angle/inter_min``, ``angle/inter_mean``, ``angle/simplex_bound``,
      ``angle/intra_mean``, ``angle/intra_over_inter`` (degrees), ``alignment``
      (exact, all same-class pairs), ``hyperspherical_energy`` (of the class
      centroids), ``uniformity`` (all pairs of at most 4,096 points: a seeded uniform
      subsample above that; ``uniformity/points`` says how many), ``effective_rank`` (of
      the same points, ``sphere_engine.metrics.effective_rank``).

    ``retrieval=False`` leaves the retrieval keys out (a caller with its own protocol);
    ``collector`` keeps per-query and per-class results (``per_query.py``).
    ``normalize``: retrieval and clustering on L2-normalised embeddings (cosine);
    ``False`` uses the raw vectors (Euclidean). ``backend``: the kNN / k-means backend,
    ``"auto"``, ``"faiss-gpu"``, ``"torch-cuda"``, ``"faiss"`` or ``"torch"``
    (``backend.py``). ``memory_budget_mb`` bounds the neighbour search's working memory.
    Norms, angles and energies use the embeddings only, not the reference. Zero vectors
    are an error (they have no direction), as are NaN/inf, fewer than two classes, 1-D
    input and mismatched lengths (ValueError).
    """
    points, true = check_pair(embeddings, labels)
    ks = check_ks(ks)
    chosen = resolve_backend(backend)
    checked_reference = check_reference(points, reference, reference_labels)
    unit = l2_normalize(points)
    search_points = unit if normalize else points

    if checked_reference is None:
        ref, ref_labels, exclude_self = search_points, true, True
    else:
        ref, ref_labels = checked_reference
        ref = l2_normalize(ref, "reference") if normalize else ref
        exclude_self = False

    results: dict[str, float] = {}
    if retrieval:
        results = retrieval_scores(
            search_points,
            true,
            ref,
            ref_labels,
            exclude_self=exclude_self,
            ks=ks,
            metric="cosine" if normalize else "euclidean",
            knn=KNN_NEIGHBORS,
            backend=chosen,
            memory_budget_mb=memory_budget_mb,
            collector=collector,
        )
    if clustering:
        results |= clustering_scores(search_points, true, seed=seed, backend=chosen)
    if agglomerative:
        results |= agglomerative_nmi(points, true, normalize=normalize, seed=seed)

    results |= norm_statistics(points)
    results |= angular_separation_scores(unit, true)
    results["alignment"] = alignment_scores(unit, true)
    _, centroids = class_centroids(unit, true)
    results["hyperspherical_energy"] = hyperspherical_energy_scores(centroids)
    sample = subsample(unit, UNIFORMITY_MAX_POINTS, seed)
    results["uniformity"] = uniformity_scores(sample)
    results["uniformity/points"] = float(sample.shape[0])
    results["effective_rank"] = effective_rank_scores(sample)
    return {name: float(value) for name, value in results.items()}
