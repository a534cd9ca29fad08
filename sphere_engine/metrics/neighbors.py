"""Exact nearest neighbours in bounded-memory query chunks.

Ranking rule (every backend, ``backend.py``): neighbours are sorted by score, highest first, and
equal scores are broken by ascending reference index. With ``exclude_self`` the
query's own row is removed *by index* (never by subtracting an identity matrix), so
another sample that duplicates the query is still retrieved, at the top.

Scores: ``metric="cosine"`` is the inner product (rows must already be unit length;
faiss ``IndexFlatIP``); ``metric="euclidean"`` is the negated squared L2 distance
(faiss ``IndexFlatL2``).

The device backends (``torch-cuda``, ``faiss-gpu``'s long lists) rank on the device
(``device_knn.py``); the others fetch k + 1 unsorted neighbours and rank them here.

Memory: queries are processed in chunks whose size is chosen so that one chunk's
score rows (torch only: faiss scores in its own fixed tiles) and neighbour lists fit
in ``memory_budget_mb``; never an N × N or Q × N matrix. A consumer reduces each
chunk to per-query numbers before the next one is searched. Queries are grouped by
how many neighbours they need (largest first), so a chunk only fetches as many
columns as its most demanding query.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import torch

from sphere_engine.metrics import backend as backends
from sphere_engine.metrics.device_knn import DeviceSearcher, device_budget_bytes
from sphere_engine.metrics.inputs import check_same_dimension

METRICS = ("cosine", "euclidean")
FAISS_MAX_K = 2048  # longer lists go through torch topk (see ``_FaissSearcher``)
# Queries per faiss call at most: many of faiss's 4,096-query BLAS tiles, with the
# k-wide result arrays still small.
FAISS_MAX_CHUNK = 65536
FAISS_GPU_MAX_K = 2048  # faiss's GPU k-selection handles at most this many
FAISS_MIN_PART = 1024  # queries per core at least when a CPU search is split


def search_on_every_core(index: object, queries: np.ndarray, k: int) -> tuple[np.ndarray, ...]:
    """``index.search(queries, k)`` of a CPU faiss index, the queries split into one part
    per core, each searched by its own thread with one OpenMP thread (faiss releases
    the GIL). faiss's own OpenMP split ends each of its many steps at a barrier where
    idle threads spin, on shared cores at several times the work; independent parts
    never wait for each other."""
    parts = min(len(os.sched_getaffinity(0)), -(-queries.shape[0] // FAISS_MIN_PART))

    def search(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with backends.single_faiss_thread():  # OpenMP settings are per thread
            return index.search(rows, k)

    if parts <= 1:
        return search(queries)
    with ThreadPoolExecutor(parts) as pool:
        found = list(pool.map(search, np.array_split(queries, parts)))
    return np.concatenate([part[0] for part in found]), np.concatenate([part[1] for part in found])


@dataclass(frozen=True)
class NeighborChunk:
    """Ranked neighbours of one chunk of queries."""

    queries: np.ndarray  # (q,) int64: which query rows this chunk holds
    indices: np.ndarray  # (q, k) int64: reference rows, nearest first
    scores: np.ndarray  # (q, k) float32: their scores, non-increasing along each row


class _HostSearcher:
    """A search of ``fetch`` unsorted neighbours, ranked on the host: one integer sort,
    then the rows whose k-th score is tied with an unfetched one re-ranked exactly."""

    reference: np.ndarray
    metric: str
    memory_budget_mb: float

    def search(
        self, queries: np.ndarray, query_ids: np.ndarray, k: int, exclude_self: bool
    ) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def chunk_rows(self, k: int) -> int:
        return _chunk_rows(self.reference.shape[0], k, self.memory_budget_mb, "torch")

    def ranked(
        self, queries: np.ndarray, query_ids: np.ndarray, k: int, exclude_self: bool
    ) -> tuple[np.ndarray, np.ndarray]:
        # One extra column tells whether the k-th neighbour is tied with an unfetched one.
        fetch = min(k + 1, self.reference.shape[0] - int(exclude_self))
        scores, indices = sort_rows(*self.search(queries, query_ids, fetch, exclude_self))
        if fetch > k:
            tied = np.flatnonzero(scores[:, k - 1] == scores[:, k])
            scores, indices = scores[:, :k].copy(), indices[:, :k].copy()
            if tied.size:
                scores[tied], indices[tied] = exact_rows(
                    queries[tied], query_ids[tied], self.reference, k, exclude_self, self.metric
                )
        return scores, indices


class _TorchSearcher(_HostSearcher):
    """Chunked matmul + topk over the whole reference set, on the CPU."""

    def __init__(self, reference: np.ndarray, metric: str, memory_budget_mb: float) -> None:
        self.reference, self.memory_budget_mb = reference, memory_budget_mb
        self.tensor = torch.from_numpy(reference)
        self.metric = metric
        self.reference_sq = (self.tensor * self.tensor).sum(1)

    def search(
        self, queries: np.ndarray, query_ids: np.ndarray, k: int, exclude_self: bool
    ) -> tuple[np.ndarray, np.ndarray]:
        scores = score_rows(torch.from_numpy(queries), self.tensor, self.reference_sq, self.metric)
        if exclude_self:
            scores[torch.arange(len(query_ids)), torch.from_numpy(query_ids)] = -torch.inf
        values, indices = torch.topk(scores, k, dim=1, largest=True, sorted=False)
        return values.numpy(), indices.numpy().astype(np.int64, copy=False)


class _FaissSearcher(_HostSearcher):
    """faiss ``IndexFlatIP``/``IndexFlatL2`` exhaustive search.

    For very long neighbour lists (k > ``FAISS_MAX_K``, e.g. MAP@R with classes of
    thousands) faiss's result reservoir costs more than the distances themselves;
    there a torch matmul + topk gives the same ranking faster (measured on 2 cores,
    60,000 × 128, k = 6,001: 3.3 s vs 1.9 s per 1,000 queries).
    """

    def __init__(self, reference: np.ndarray, metric: str, memory_budget_mb: float) -> None:
        self.reference, self.memory_budget_mb = reference, memory_budget_mb
        self.fallback = _TorchSearcher(reference, metric, memory_budget_mb)
        self.index = flat_index(reference, metric)
        self.metric = metric
        self.size = reference.shape[0]

    def chunk_rows(self, k: int) -> int:
        return _chunk_rows(self.size, k, self.memory_budget_mb, "faiss")

    def search_index(self, queries: np.ndarray, fetch: int) -> tuple[np.ndarray, np.ndarray]:
        return search_on_every_core(self.index, queries, fetch)

    def search(
        self, queries: np.ndarray, query_ids: np.ndarray, k: int, exclude_self: bool
    ) -> tuple[np.ndarray, np.ndarray]:
        if k > FAISS_MAX_K:
            return self.fallback.search(queries, query_ids, k, exclude_self)
        fetch = min(k + int(exclude_self), self.size)
        scores, indices = self.search_index(queries, fetch)
        if self.metric == "euclidean":
            scores = -scores
        if not exclude_self:
            return scores, indices
        # Drop the query's own row; where it fell outside the fetched list (only
        # possible with many exact duplicates), drop the surplus last column instead.
        drop = indices == query_ids[:, None]
        drop[~drop.any(axis=1), -1] = True
        keep = ~drop
        rows = len(query_ids)
        return scores[keep].reshape(rows, fetch - 1), indices[keep].reshape(rows, fetch - 1)


class _FaissGpuSearcher(_FaissSearcher):
    """The same flat index on GPU 0 (``faiss-gpu``): ``StandardGpuResources`` with its
    scratch memory capped by the budget, the CPU index copied by ``index_cpu_to_gpu``.
    Lists longer than faiss's GPU limit (``FAISS_GPU_MAX_K``) and references that do
    not fit on the device go to the exact torch search on the device instead."""

    def __init__(
        self,
        reference: np.ndarray,
        metric: str,
        memory_budget_mb: float,
        device_search: DeviceSearcher,
        index: object | None,
    ) -> None:
        self.reference, self.metric, self.size = reference, metric, reference.shape[0]
        self.memory_budget_mb = memory_budget_mb
        self.device_search, self.index = device_search, index

    def search_index(self, queries: np.ndarray, fetch: int) -> tuple[np.ndarray, np.ndarray]:
        return self.index.search(queries, fetch)  # one device: no split

    def chunk_rows(self, k: int) -> int:
        if self.index is None or k + 2 > FAISS_GPU_MAX_K:
            return self.device_search.chunk_rows(k)
        return super().chunk_rows(k)

    def ranked(
        self, queries: np.ndarray, query_ids: np.ndarray, k: int, exclude_self: bool
    ) -> tuple[np.ndarray, np.ndarray]:
        if self.index is None or k + 2 > FAISS_GPU_MAX_K:  # fetch: k + 1, + its own row
            return self.device_search.ranked(queries, query_ids, k, exclude_self)
        return super().ranked(queries, query_ids, k, exclude_self)


def flat_index(reference: np.ndarray, metric: str) -> object:
    """A faiss exact (flat) CPU index holding the reference rows."""
    faiss = backends.faiss
    dim = reference.shape[1]
    index = faiss.IndexFlatIP(dim) if metric == "cosine" else faiss.IndexFlatL2(dim)
    index.add(reference)
    return index


def _faiss_gpu_searcher(
    reference: np.ndarray, metric: str, memory_budget_mb: float
) -> _FaissGpuSearcher:
    faiss = backends.faiss
    device = torch.device("cuda")
    budget = device_budget_bytes(device, memory_budget_mb)
    device_search = DeviceSearcher(reference, metric, device, budget)
    if not device_search.resident:
        return _FaissGpuSearcher(reference, metric, memory_budget_mb, device_search, None)
    resources = faiss.StandardGpuResources()
    resources.setTempMemory(min(budget // 4, 1 << 30))
    index = faiss.index_cpu_to_gpu(resources, 0, flat_index(reference, metric))
    searcher = _FaissGpuSearcher(reference, metric, memory_budget_mb, device_search, index)
    searcher.resources = resources  # lives as long as the index that uses it
    return searcher


def make_searcher(
    backend: str, reference: np.ndarray, metric: str, memory_budget_mb: float
) -> _HostSearcher | DeviceSearcher:
    """The searcher of a resolved backend (``backend.py``)."""
    if backend == "faiss":
        return _FaissSearcher(reference, metric, memory_budget_mb)
    if backend == "faiss-gpu":
        return _faiss_gpu_searcher(reference, metric, memory_budget_mb)
    if backend == "torch-cuda":
        device = torch.device(backends.TORCH_DEVICE)
        budget = device_budget_bytes(device, memory_budget_mb)
        return DeviceSearcher(reference, metric, device, budget)
    return _TorchSearcher(reference, metric, memory_budget_mb)


def score_rows(
    queries: torch.Tensor, reference: torch.Tensor, reference_sq: torch.Tensor, metric: str
) -> torch.Tensor:
    """Scores of every query against every reference row, (q × n) float32."""
    scores = queries @ reference.T
    if metric == "euclidean":
        scores = 2 * scores - reference_sq[None, :] - (queries * queries).sum(1, keepdim=True)
    return scores


def sort_rows(scores: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row by score descending, ties by ascending index, with one integer sort.

    A float32 maps to a uint32 whose unsigned order is the float order (flip all bits
    of negatives, set the sign bit of the rest); its complement in the high 32 bits
    and the index in the low 32 bits make one uint64 key whose ascending order is the
    ranking rule. One ``np.sort`` of keys is several times faster than ``lexsort``.
    """
    bits = (scores + np.float32(0.0)).view(np.uint32)  # + 0.0 turns -0.0 into +0.0
    negative = (bits >> np.uint32(31)).astype(bool)
    ascending = np.where(negative, ~bits, bits | np.uint32(0x80000000))
    keys = ((~ascending).astype(np.uint64) << np.uint64(32)) | indices.astype(np.uint64)
    keys.sort(axis=1)
    high = ~(keys >> np.uint64(32)).astype(np.uint32)
    positive = (high >> np.uint32(31)).astype(bool)
    sorted_bits = np.where(positive, high & np.uint32(0x7FFFFFFF), ~high)
    low = (keys & np.uint64(0xFFFFFFFF)).astype(np.int64)
    return sorted_bits.view(np.float32), low


def exact_rows(
    queries: np.ndarray,
    query_ids: np.ndarray,
    reference: np.ndarray,
    k: int,
    exclude_self: bool,
    metric: str,
) -> tuple[np.ndarray, np.ndarray]:
    """Full-row ranking for the few queries whose k-th neighbour is tied with the next."""
    ref = torch.from_numpy(reference)
    scores = score_rows(torch.from_numpy(queries), ref, (ref * ref).sum(1), metric).numpy()
    if exclude_self:
        scores[np.arange(len(query_ids)), query_ids] = -np.inf
    candidates = np.broadcast_to(np.arange(reference.shape[0]), scores.shape)
    order = np.lexsort((candidates, -scores), axis=-1)[:, :k]
    return np.take_along_axis(scores, order, 1), order.astype(np.int64)


def _chunk_rows(num_reference: int, k: int, memory_budget_mb: float, searcher: str) -> int:
    """How many queries one search call takes within the budget.

    torch materialises a float32 score row per query plus ~6 k-wide arrays; faiss
    scores internally in fixed tiles (its own bounded memory), so only the k-wide
    arrays count: a call gets tens of thousands of queries under the default budget
    (faiss runs calls of a few hundred queries several times slower per query).
    """
    list_bytes = 48 * (k + 2)
    if searcher == "faiss" and k <= FAISS_MAX_K:
        return max(1, min(FAISS_MAX_CHUNK, int(memory_budget_mb * 2**20) // list_bytes))
    return max(1, int(memory_budget_mb * 2**20) // (4 * num_reference + list_bytes))


def ranked_neighbors(
    queries: np.ndarray,
    reference: np.ndarray,
    k: int | np.ndarray,
    *,
    exclude_self: bool,
    query_rows: np.ndarray | None = None,
    metric: str = "cosine",
    backend: str = "auto",
    memory_budget_mb: float = 256.0,
) -> Iterator[NeighborChunk]:
    """Yield the ranked neighbours of the queries, chunk by chunk.

    queries: Q × d float32; reference: N × d float32 (the same array as ``queries``
    when ``exclude_self``, so that query i is reference row i). ``query_rows``: which
    query rows to search (default all), M of them. ``k``: neighbours per searched
    query, an int or a length-M int array, clipped to the number of candidates (N, or
    N − 1 with ``exclude_self``). Each chunk has as many columns as its largest
    clipped k; rows needing fewer hold extra neighbours beyond their own k.
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {list(METRICS)}; got {metric!r}")
    if exclude_self and queries.shape != reference.shape:
        raise ValueError("exclude_self needs queries and reference to be the same rows")
    check_same_dimension(queries, "queries", reference, "the reference")
    num_candidates = reference.shape[0] - int(exclude_self)
    if num_candidates < 1:
        raise ValueError("need at least one candidate neighbour per query")
    if query_rows is None:
        query_rows = np.arange(queries.shape[0], dtype=np.int64)
    query_rows = np.asarray(query_rows, dtype=np.int64)
    need = np.broadcast_to(np.asarray(k, dtype=np.int64), query_rows.shape)
    if need.size and (need < 1).any():
        raise ValueError(f"k must be at least 1; got minimum {int(need.min())}")
    need = np.minimum(need, num_candidates)
    chosen = backends.resolve_backend(backend)
    searcher = make_searcher(chosen, reference, metric, memory_budget_mb)

    order = np.argsort(-need, kind="stable")
    start = 0
    while start < order.size:
        k_chunk = int(need[order[start]])
        rows = searcher.chunk_rows(k_chunk)
        query_ids = query_rows[order[start : start + rows]]
        start += query_ids.size
        chunk_queries = np.ascontiguousarray(queries[query_ids])
        scores, indices = searcher.ranked(chunk_queries, query_ids, k_chunk, exclude_self)
        yield NeighborChunk(queries=query_ids, indices=indices, scores=scores)
