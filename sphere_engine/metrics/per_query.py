"""Per-query and per-class retrieval results, kept while the metrics stream.

``QueryCollector`` is handed to ``retrieval_scores``; each chunk of scored queries
adds its per-query hit@1 and AP@R to per-class sums (O(classes) memory), and for the
kept queries (all of them up to ``max_queries``, else a seeded uniform sample of
that many) their ``top_k`` nearest reference rows. ``results()`` gives plain column
arrays, those of ``db.query_results`` (the explorer's storage), with each kept
neighbour's similarity (cosine, or negated squared Euclidean distance) recomputed
from the embeddings: s × k dot products, never a matrix; given the raw norms, each
kept query's ``norm`` and its neighbours' ``neighbor_norms`` too.

Classes with a single sample (no other sample to retrieve, in leave-one-out) or
absent from the reference have no scored query: their ``queries`` is 0 and their
R@1 / MAP@R NaN, rather than a 0 that would skew per-class averages.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

DEFAULT_MAX_QUERIES = 10_000
DEFAULT_TOP_K = 10
_SIMILARITY_ROWS = 1024  # kept queries whose neighbours are gathered at once


@dataclass(frozen=True)
class QueryResults:
    """Column arrays of the kept queries and of every class (see ``db.query_results``)."""

    queries: dict[str, np.ndarray]
    classes: dict[str, np.ndarray]

    def with_sample_ids(self, ids: np.ndarray) -> QueryResults:
        """The same results with each row number (``query``, ``neighbors``) replaced by
        ``ids[row]``: the caller's own sample ids (the SDK's ``sample_ids``)."""
        ids = np.asarray(ids, dtype=np.int64)
        queries = dict(self.queries)
        queries["query"] = ids[queries["query"]]
        queries["neighbors"] = ids[queries["neighbors"]]
        return QueryResults(queries, self.classes)


@dataclass
class QueryCollector:
    """Accumulates per-class sums and the kept queries' neighbours (module doc)."""

    max_queries: int = DEFAULT_MAX_QUERIES
    top_k: int = DEFAULT_TOP_K
    seed: int = 0
    _kept: np.ndarray | None = field(default=None, init=False)
    _parts: list[tuple[np.ndarray, ...]] = field(default_factory=list, init=False)
    _classes: np.ndarray | None = field(default=None, init=False)
    _sums: np.ndarray | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        if self.max_queries < 0 or self.top_k < 1:
            raise ValueError(
                f"max_queries must be >= 0 and top_k >= 1; got {self.max_queries}, {self.top_k}"
            )

    def start(self, query_labels: np.ndarray, scored: np.ndarray) -> None:
        """Called once with every query's label and the rows that will be scored."""
        self._classes, counts = np.unique(query_labels, return_counts=True)
        self._sums = np.zeros((self._classes.size, 4))  # samples, scored, hits, AP sum
        self._sums[:, 0] = counts
        kept = scored
        if scored.size > self.max_queries:
            rng = np.random.default_rng(self.seed)
            kept = np.sort(rng.choice(scored, self.max_queries, replace=False))
        self._kept = np.zeros(query_labels.size, dtype=bool)
        self._kept[kept] = True
        self._parts = []

    def add(
        self,
        queries: np.ndarray,
        labels: np.ndarray,
        positives: np.ndarray,
        hit_at_1: np.ndarray,
        ap_at_r: np.ndarray,
        neighbors: np.ndarray,
    ) -> None:
        """One chunk of scored queries (neighbours: q × ≥ top_k rows, nearest first)."""
        assert self._classes is not None and self._sums is not None and self._kept is not None
        position = np.searchsorted(self._classes, labels)
        sums = self._sums
        sums[:, 1] += np.bincount(position, minlength=sums.shape[0])
        sums[:, 2] += np.bincount(position, hit_at_1.astype(float), sums.shape[0])
        sums[:, 3] += np.bincount(position, ap_at_r, sums.shape[0])
        keep = self._kept[queries]
        if keep.any():
            width = min(self.top_k, neighbors.shape[1])
            self._parts.append(
                (
                    queries[keep],
                    labels[keep],
                    positives[keep],
                    hit_at_1[keep],
                    ap_at_r[keep],
                    neighbors[keep, :width],
                )
            )

    def results(
        self,
        queries: np.ndarray,
        reference: np.ndarray,
        reference_labels: np.ndarray,
        metric: str,
        query_norms: np.ndarray | None = None,
        reference_norms: np.ndarray | None = None,
    ) -> QueryResults:
        """The kept queries (by query row) and the per-class table; with the raw
        embeddings' norms (one per query row, one per reference row) each kept query
        also gets its ``norm`` and its neighbours' ``neighbor_norms``."""
        assert self._classes is not None and self._sums is not None
        sums = self._sums
        with np.errstate(invalid="ignore", divide="ignore"):
            recall = np.where(sums[:, 1] > 0, sums[:, 2] / sums[:, 1], np.nan)
            average_precision = np.where(sums[:, 1] > 0, sums[:, 3] / sums[:, 1], np.nan)
        classes = {
            "label": self._classes.astype(np.int64),
            "samples": sums[:, 0].astype(np.int64),
            "queries": sums[:, 1].astype(np.int64),
            "recall@1": recall,
            "map@r": average_precision,
        }
        columns = self._query_columns(queries, reference, reference_labels, metric)
        if query_norms is not None and reference_norms is not None:
            columns["norm"] = np.asarray(query_norms, dtype=np.float32)[columns["query"]]
            columns["neighbor_norms"] = np.asarray(reference_norms, dtype=np.float32)[
                columns["neighbors"]
            ]
        return QueryResults(columns, classes)

    def _query_columns(
        self, queries: np.ndarray, reference: np.ndarray, reference_labels: np.ndarray, metric: str
    ) -> dict[str, np.ndarray]:
        names = ("query", "label", "positives", "hit@1", "ap@r", "neighbors")
        if not self._parts:
            width = self.top_k
            empty = [np.zeros(0, np.int64)] * 3 + [np.zeros(0, bool), np.zeros(0)]
            columns = dict(zip(names, [*empty, np.zeros((0, width), np.int64)], strict=True))
        else:
            width = min(part[5].shape[1] for part in self._parts)
            parts = [(*part[:5], part[5][:, :width]) for part in self._parts]
            stacked = [np.concatenate(column) for column in zip(*parts, strict=True)]
            order = np.argsort(stacked[0])
            columns = {name: array[order] for name, array in zip(names, stacked, strict=True)}
        neighbors = columns["neighbors"]
        similarities = np.empty(neighbors.shape, dtype=np.float32)
        for start in range(0, neighbors.shape[0], _SIMILARITY_ROWS):
            block = slice(start, start + _SIMILARITY_ROWS)
            rows = queries[columns["query"][block]][:, None, :]
            candidates = reference[neighbors[block]]  # a few rows × k × d
            if metric == "cosine":
                similarities[block] = (candidates * rows).sum(axis=2)
            else:
                similarities[block] = -((candidates - rows) ** 2).sum(axis=2)
        columns["neighbor_labels"] = reference_labels[neighbors].astype(np.int64)
        columns["similarities"] = similarities
        return columns
