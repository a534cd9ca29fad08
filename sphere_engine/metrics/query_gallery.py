"""Retrieval protocols: leave-one-out and query–gallery (SCIENCE.md §5, §7).

- ``leave_one_out``: every sample queries all the others (the default of
  ``retrieval_metrics``; the query itself is excluded by index);
- ``query_gallery`` (In-shop, re-identification): the queries search only the gallery
  set; nothing is excluded, since a query is never in the gallery.

The metrics and their keys are those of ``retrieval.py`` (``recall@K`` per K in
``recall_ks``, ``precision@1``, ``r_precision``, ``map@r``, ``knn_accuracy``,
``retrieval/queries``, ``retrieval/queries_skipped``, ``retrieval/max_r``); in the
query–gallery protocol R counts the gallery samples of the query's class, and a query
whose class is absent from the gallery is skipped (counted in
``retrieval/queries_skipped``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sphere_engine.catalogue.facts import DEFAULT_RECALL_KS
from sphere_engine.metrics.inputs import check_embeddings, check_labels, to_numpy
from sphere_engine.metrics.retrieval import KNN_NEIGHBORS, retrieval_metrics

PROTOCOLS = ("leave_one_out", "query_gallery")
IN_SHOP_KS = (1, 10, 20, 30)


def query_gallery_metrics(
    queries: Any,
    query_labels: Any,
    gallery: Any,
    gallery_labels: Any,
    *,
    recall_ks: Any = IN_SHOP_KS,
    normalize: bool = True,
    knn: int = KNN_NEIGHBORS,
    backend: str = "auto",
    memory_budget_mb: float = 256.0,
) -> dict[str, float]:
    """Retrieval metrics of Q × d queries searched against a G × d gallery."""
    return retrieval_metrics(
        queries,
        query_labels,
        ks=recall_ks,
        normalize=normalize,
        reference=gallery,
        reference_labels=gallery_labels,
        knn=knn,
        backend=backend,
        memory_budget_mb=memory_budget_mb,
    )


def split_query_gallery(
    embeddings: Any, labels: Any, is_query: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(queries, query labels, gallery, gallery labels) from N rows and an N-long mask."""
    points = check_embeddings(embeddings)
    true = check_labels(labels, points.shape[0])
    mask = to_numpy(is_query, "is_query")
    if mask.shape != (points.shape[0],) or mask.dtype != np.bool_:
        raise ValueError(
            f"is_query must be a boolean array of shape ({points.shape[0]},); got "
            f"{mask.dtype} of shape {tuple(mask.shape)}"
        )
    if mask.all() or not mask.any():
        raise ValueError("is_query must mark at least one query and one gallery sample")
    return points[mask], true[mask], points[~mask], true[~mask]


def retrieval_protocol_metrics(
    embeddings: Any,
    labels: Any,
    *,
    protocol: str = "leave_one_out",
    is_query: Any = None,
    recall_ks: Any = DEFAULT_RECALL_KS,
    **options: Any,
) -> dict[str, float]:
    """Retrieval metrics of N × d embeddings under ``protocol`` (see the module doc).

    ``is_query`` (N booleans) picks the queries for ``query_gallery``; the rest is the
    gallery. ``options``: ``normalize``, ``knn``, ``backend``, ``memory_budget_mb``.
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {list(PROTOCOLS)}; got {protocol!r}")
    if protocol == "leave_one_out":
        if is_query is not None:
            raise ValueError("is_query is only used by protocol 'query_gallery'")
        return retrieval_metrics(embeddings, labels, ks=recall_ks, **options)
    if is_query is None:
        raise ValueError("protocol 'query_gallery' needs is_query (N booleans)")
    queries, query_labels, gallery, gallery_labels = split_query_gallery(
        embeddings, labels, is_query
    )
    return query_gallery_metrics(
        queries, query_labels, gallery, gallery_labels, recall_ks=recall_ks, **options
    )
