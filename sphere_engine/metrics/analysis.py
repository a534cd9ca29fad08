"""What ``spherescope analyze`` computes for embeddings a user already has.

- one file: every metric of ``evaluate_embeddings`` (retrieval leave-one-out) plus the
  verification metrics and the downsampled ROC;
- a query file and a gallery file (In-shop style): the same on the two sets together
  (geometry, clustering, verification), with the retrieval keys replaced by those of
  the queries searching only the gallery (no leave-one-out retrieval is run for it).
  String labels of the two files are matched by name (``load_query_gallery``).

With a ``collector`` (``per_query.py``) the retrieval also keeps per-query and
per-class results, whose similarities are those of the protocol's own search.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from sphere_engine.catalogue.facts import DEFAULT_RECALL_KS
from sphere_engine.metrics.embedding_files import LabelledEmbeddings, load_labelled_embeddings
from sphere_engine.metrics.evaluate import evaluate_embeddings
from sphere_engine.metrics.inputs import check_ks, check_pair, l2_normalize
from sphere_engine.metrics.per_query import QueryCollector, QueryResults
from sphere_engine.metrics.query_gallery import IN_SHOP_KS
from sphere_engine.metrics.retrieval import retrieval_scores
from sphere_engine.metrics.verification import verification_scores_and_roc

LEAVE_ONE_OUT_KS = DEFAULT_RECALL_KS
Roc = tuple[np.ndarray, np.ndarray, np.ndarray]


def load_query_gallery(
    query_path: str | Path, gallery_path: str | Path
) -> tuple[LabelledEmbeddings, LabelledEmbeddings]:
    """Both files with one class numbering: string labels are matched by name (ids in
    sorted order of all names); integer labels are kept. Mixing the two is an error."""
    query = load_labelled_embeddings(query_path)
    gallery = load_labelled_embeddings(gallery_path)
    if (query.class_names is None) != (gallery.class_names is None):
        raise ValueError(
            f"{query_path} and {gallery_path}: one has string labels and the other integer "
            "labels; use the same kind in both"
        )
    if query.embeddings.shape[1] != gallery.embeddings.shape[1]:
        raise ValueError(
            f"{query_path} has dimension {query.embeddings.shape[1]} but {gallery_path} has "
            f"{gallery.embeddings.shape[1]}; they must match"
        )
    if query.class_names is None or gallery.class_names is None:
        return query, gallery
    names = tuple(sorted(set(query.class_names) | set(gallery.class_names)))
    position = {name: i for i, name in enumerate(names)}

    def renumber(part: LabelledEmbeddings) -> LabelledEmbeddings:
        assert part.class_names is not None
        ids = np.array([position[name] for name in part.class_names], dtype=np.int64)
        return LabelledEmbeddings(part.embeddings, ids[part.labels], names)

    return renumber(query), renumber(gallery)


def analysis_metrics(
    embeddings: Any,
    labels: Any,
    *,
    is_query: np.ndarray | None = None,
    recall_ks: Any = None,
    verification: bool = True,
    seed: int = 0,
    collector: QueryCollector | None = None,
    backend: str = "auto",
) -> tuple[dict[str, float], Roc | None]:
    """(metrics, ROC or None) of N × d embeddings; ``is_query`` (N booleans) switches to
    the query–gallery protocol (default Ks: 1, 10, 20, 30; leave-one-out: 1, 2, 4, 8).
    ``backend``: the kNN / k-means backend (``backend.py``)."""
    if is_query is None:
        ks = LEAVE_ONE_OUT_KS if recall_ks is None else recall_ks
        metrics = evaluate_embeddings(
            embeddings, labels, ks=ks, seed=seed, collector=collector, backend=backend
        )
    else:
        ks = check_ks(IN_SHOP_KS if recall_ks is None else recall_ks)
        points, true = check_pair(embeddings, labels)
        metrics = evaluate_embeddings(points, true, seed=seed, retrieval=False, backend=backend)
        unit = l2_normalize(points)
        metrics |= retrieval_scores(
            unit[is_query], true[is_query], unit[~is_query], true[~is_query],
            exclude_self=False, ks=ks, collector=collector, backend=backend,
        )  # fmt: skip
    roc = None
    if verification:
        scores, roc = verification_scores_and_roc(embeddings, labels, seed=seed)
        metrics |= scores
    return metrics, roc


def collected_results(
    collector: QueryCollector,
    embeddings: Any,
    labels: Any,
    is_query: np.ndarray | None = None,
) -> QueryResults:
    """The collector's results for the arrays ``analysis_metrics`` searched (query rows
    numbered within the queries, neighbour rows within the gallery, in the
    query–gallery protocol)."""
    points, true = check_pair(embeddings, labels)
    unit = l2_normalize(points)
    norms = np.linalg.norm(points, axis=1)
    if is_query is None:
        return collector.results(unit, unit, true, "cosine", norms, norms)
    return collector.results(
        unit[is_query],
        unit[~is_query],
        true[~is_query],
        "cosine",
        norms[is_query],
        norms[~is_query],
    )
