"""Retrieval metrics as the metric-learning literature defines them (SCIENCE.md §5).

For each query, neighbours are ranked by cosine similarity (or negated Euclidean
distance with ``normalize=False``), the query itself excluded by index; ties are
broken by ascending sample index (see ``neighbors.py``). R is the number of *other*
samples of the query's class (of reference samples with the query's label when a
``reference`` set is given). Then, averaged over queries:

- ``recall@K``: 1 if any of the K nearest has the query's label (K is clipped to the
  number of candidates);
- ``precision@1``: the nearest has the query's label (equal to ``recall@1``);
- ``r_precision``: fraction of the R nearest with the query's label;
- ``map@r``: (1/R) Σ_{i≤R} P@i · rel(i) (Musgrave et al. 2020);
- ``knn_accuracy``: majority label of the ``knn`` (10) nearest equals the query's;
  a tied vote goes to the tied label met first in rank order.

Queries with R = 0 (single-sample classes, or labels absent from the reference) have
no positives and are left out of every one of these (they cannot be retrieved, so
they do not count as misses); ``retrieval/queries_skipped`` counts them,
``retrieval/classes_skipped`` their classes, and ``retrieval/queries`` counts those
used (all metrics are NaN when no query is left). No cap on R is ever applied, in
bounded memory: a query with R up to ``COUNTING_MIN_R`` ranks its R nearest
(``neighbors.py``, faiss or torch); a longer one counts its positives' ranks from a
matmul search (``positive_ranks``); on a device backend (``backend.py``) every
query ranks its R nearest there. ``retrieval/max_r`` reports the largest R.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

from sphere_engine.catalogue.facts import DEFAULT_RECALL_KS
from sphere_engine.metrics.backend import DEVICE_BACKENDS, resolve_backend
from sphere_engine.metrics.inputs import (
    check_embeddings,
    check_ks,
    check_labels,
    check_reference,
    l2_normalize,
)
from sphere_engine.metrics.neighbors import ranked_neighbors
from sphere_engine.metrics.per_query import QueryCollector
from sphere_engine.metrics.positive_ranks import ranked_blocks

KNN_NEIGHBORS = 10
# Queries with more positives than this get MAP@R by rank counting; below it a ranked
# list of R neighbours (faiss's fused search and selection) is cheaper. Measured (CPU
# seconds, 2-core AMD, 10,000 × 128): R = 49 ranked 0.71 vs counted 0.93; R = 99
# ranked 0.95 vs counted 0.62; R = 999 ranked 3.1 vs counted 0.70.
COUNTING_MIN_R = 64


def _positives_per_query(
    query_labels: np.ndarray, reference_labels: np.ndarray, exclude_self: bool
) -> np.ndarray:
    """R for each query: reference samples sharing its label, minus itself."""
    classes, counts = np.unique(reference_labels, return_counts=True)
    position = np.clip(np.searchsorted(classes, query_labels), 0, classes.size - 1)
    found = classes[position] == query_labels
    return np.where(found, counts[position], 0) - int(exclude_self)


def _majority_vote(votes: np.ndarray) -> np.ndarray:
    """Per row of neighbour labels (q × m, nearest first), the most frequent label.

    A tie goes to the tied label that appears first, i.e. nearest.
    """
    counts = (votes[:, :, None] == votes[:, None, :]).sum(axis=2)
    first_best = np.argmax(counts == counts.max(axis=1, keepdims=True), axis=1)
    return votes[np.arange(votes.shape[0]), first_best]


Block = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


@dataclass(frozen=True)
class RankingSearch:
    """What both ways of ranking one evaluation's queries share: the checked arrays,
    each query's R (``positives``), the neighbours kept per query and how to search."""

    queries: np.ndarray
    query_labels: np.ndarray
    reference: np.ndarray
    reference_labels: np.ndarray
    positives: np.ndarray
    nearest: int
    exclude_self: bool
    metric: str
    backend: str
    memory_budget_mb: float


def _ranked_lists(search: RankingSearch, rows: np.ndarray) -> Iterator[Block]:
    """(queries, nearest neighbours, positives in the top R, R · AP@R) from ranked
    lists of max(R, nearest) neighbours per query (the short-R queries ``rows``)."""
    if rows.size == 0:
        return
    need = np.maximum(search.positives[rows], search.nearest)
    for chunk in ranked_neighbors(
        search.queries, search.reference, need, exclude_self=search.exclude_self,
        query_rows=rows, metric=search.metric, backend=search.backend,
        memory_budget_mb=search.memory_budget_mb,
    ):  # fmt: skip
        r = search.positives[chunk.queries]
        query_labels = search.query_labels[chunk.queries]
        relevant = search.reference_labels[chunk.indices] == query_labels[:, None]
        rank = np.arange(1, relevant.shape[1] + 1)
        relevant_in_r = relevant & (rank[None, :] <= r[:, None])
        found = np.cumsum(relevant_in_r, axis=1)  # positives among the first i
        precision_sum = (found / rank[None, :] * relevant_in_r).sum(axis=1)
        yield chunk.queries, chunk.indices, found[:, -1], precision_sum


def _counted_ranks(search: RankingSearch, rows: np.ndarray) -> Iterator[Block]:
    """The same for the long-R queries ``rows``, by rank counting (``positive_ranks``)."""
    resolve_backend(search.backend)  # validated; counting is a numpy sgemm search either way
    if rows.size == 0:
        return
    for block in ranked_blocks(
        search.queries, search.query_labels, search.reference, search.reference_labels,
        search.positives, rows, exclude_self=search.exclude_self, k=search.nearest,
        metric=search.metric, memory_budget_mb=search.memory_budget_mb,
    ):  # fmt: skip
        yield block.queries, block.nearest, block.hits_in_r, block.precision_sum


def retrieval_scores(
    queries: np.ndarray,
    query_labels: np.ndarray,
    reference: np.ndarray,
    reference_labels: np.ndarray,
    *,
    exclude_self: bool,
    ks: tuple[int, ...] = DEFAULT_RECALL_KS,
    metric: str = "cosine",
    knn: int = KNN_NEIGHBORS,
    backend: str = "auto",
    memory_budget_mb: float = 256.0,
    collector: QueryCollector | None = None,
) -> dict[str, float]:
    """Retrieval metrics on already-checked arrays (queries Q × d, reference N × d).

    ``exclude_self`` means the queries are the reference (leave-one-out retrieval).
    ``collector`` (``per_query.py``) is given every scored query's numbers as they
    stream. Use ``retrieval_metrics`` for raw user input.
    """
    backend = resolve_backend(backend)  # once for the whole evaluation
    positives = _positives_per_query(query_labels, reference_labels, exclude_self)
    used = np.flatnonzero(positives > 0)
    if collector is not None:
        collector.start(query_labels, used)
    nan = float("nan")
    result: dict[str, float] = {f"recall@{k}": nan for k in ks}
    result |= {"precision@1": nan, "r_precision": nan, "map@r": nan, "knn_accuracy": nan}
    result |= {
        "retrieval/queries": float(used.size),
        "retrieval/queries_skipped": float(query_labels.size - used.size),
        "retrieval/max_r": float(positives.max(initial=0)),
        "retrieval/classes_skipped": float(np.unique(query_labels[positives <= 0]).size),
    }
    if used.size == 0:
        return result

    hits = dict.fromkeys(ks, 0)
    totals = {"precision@1": 0.0, "r_precision": 0.0, "map@r": 0.0, "knn_accuracy": 0.0}
    nearest = max(max(ks), knn, 0 if collector is None else collector.top_k)
    # On a device, ranking R neighbours costs one topk per chunk: no counting there.
    long = positives[used] > (np.inf if backend in DEVICE_BACKENDS else COUNTING_MIN_R)
    search = RankingSearch(
        queries, query_labels, reference, reference_labels, positives, nearest,
        exclude_self, metric, backend, memory_budget_mb,
    )  # fmt: skip
    for queried, neighbours, hits_in_r, precision_sum in chain(
        _ranked_lists(search, used[~long]), _counted_ranks(search, used[long])
    ):  # each block reduced before the next is searched
        labels = query_labels[queried]
        r = positives[queried]
        neighbour_labels = reference_labels[neighbours]
        relevant = neighbour_labels == labels[:, None]  # (q × k) bool, nearest first
        for k in ks:
            hits[k] += int(relevant[:, :k].any(axis=1).sum())
        totals["precision@1"] += float(relevant[:, 0].sum())
        totals["r_precision"] += float((hits_in_r / r).sum())
        totals["map@r"] += float((precision_sum / r).sum())
        winner = _majority_vote(neighbour_labels[:, :knn])
        totals["knn_accuracy"] += float((winner == labels).sum())
        if collector is not None:
            collector.add(queried, labels, r, relevant[:, 0], precision_sum / r, neighbours)

    for k in ks:
        result[f"recall@{k}"] = hits[k] / used.size
    for name, total in totals.items():
        result[name] = total / used.size
    return result


def retrieval_metrics(
    embeddings: Any,
    labels: Any,
    *,
    ks: Any = DEFAULT_RECALL_KS,
    normalize: bool = True,
    reference: Any = None,
    reference_labels: Any = None,
    knn: int = KNN_NEIGHBORS,
    backend: str = "auto",
    memory_budget_mb: float = 256.0,
) -> dict[str, float]:
    """All retrieval metrics of N × d embeddings with N labels (numpy or torch).

    With ``reference`` (M × d) and ``reference_labels`` (M), the embeddings are queries
    searched against the reference set (nothing excluded); otherwise each embedding
    queries all the others. ``normalize``: L2-normalise and rank by cosine similarity;
    ``False`` ranks raw vectors by Euclidean distance.
    """
    queries = check_embeddings(embeddings)
    query_labels = check_labels(labels, queries.shape[0])
    ks = check_ks(ks)
    if isinstance(knn, bool) or not isinstance(knn, int) or knn < 1:
        raise ValueError(f"knn must be a positive integer; got {knn!r}")
    checked_reference = check_reference(queries, reference, reference_labels)
    if checked_reference is None:
        ref, ref_labels, exclude_self = queries, query_labels, True
        if queries.shape[0] < 2:
            raise ValueError("embeddings need at least 2 rows for leave-one-out retrieval")
    else:
        (ref, ref_labels), exclude_self = checked_reference, False
    if normalize:
        queries = l2_normalize(queries)
        ref = queries if exclude_self else l2_normalize(ref, "reference")
    return retrieval_scores(
        queries,
        query_labels,
        ref,
        ref_labels,
        exclude_self=exclude_self,
        ks=ks,
        metric="cosine" if normalize else "euclidean",
        knn=knn,
        backend=backend,
        memory_budget_mb=memory_budget_mb,
    )


def recall_at_k(embeddings: Any, labels: Any, k: int = 1, **options: Any) -> float:
    """Recall@K (metric-learning sense) of N × d embeddings; options as ``retrieval_metrics``."""
    return retrieval_metrics(embeddings, labels, ks=(k,), **options)[f"recall@{k}"]


def precision_at_1(embeddings: Any, labels: Any, **options: Any) -> float:
    """Precision@1 (= 1-NN accuracy = Recall@1) of N × d embeddings."""
    return retrieval_metrics(embeddings, labels, ks=(1,), **options)["precision@1"]


def r_precision(embeddings: Any, labels: Any, **options: Any) -> float:
    """R-precision of N × d embeddings (R = other samples of the query's class)."""
    return retrieval_metrics(embeddings, labels, ks=(1,), **options)["r_precision"]


def map_at_r(embeddings: Any, labels: Any, **options: Any) -> float:
    """MAP@R (Musgrave et al. 2020) of N × d embeddings."""
    return retrieval_metrics(embeddings, labels, ks=(1,), **options)["map@r"]


def knn_accuracy(embeddings: Any, labels: Any, **options: Any) -> float:
    """Accuracy of the majority vote of the 10 nearest neighbours (``knn=`` to change)."""
    return retrieval_metrics(embeddings, labels, ks=(1,), **options)["knn_accuracy"]
