"""Ranks of each query's positives by counting: MAP@R without ranking R neighbours.

MAP@R and R-precision need, per query, only where its R positives (reference samples
of its class) fall among its R nearest. Number the positives by score, best first;
positive m sits at rank m + n_m, n_m = negatives ranked above it, and

    AP@R = (1/R) Σ_{m : m + n_m ≤ R} m / (m + n_m),   R-precision = #{m : m + n_m ≤ R} / R.

Which negatives can matter: with the positives sorted ascending, a_1 ≤ … ≤ a_R, and
θ = a_K for some K, at least R − K + 1 positives score ≥ θ; if at least K − 1
negatives do too, R samples score ≥ θ, so every sample in the top R does, and the
negatives below θ (the ones not counted) precede only positives that rank beyond R
either way (a positive below θ has all the counted ones above it: m + n_m > R). K is
guessed per class from its last finished block (a class none of whose blocks has
finished: from the last finished block of any class, as a share of R): the median
count of negatives in the top R (about that many positives fall below the R-th
score). A row whose guess
fails that check has c < K − 1 negatives ≥ a_K; it retries once with K' = c + 1,
which holds for sure (a_K' ≤ a_K has those c negatives above it). So a row's
candidates are about the negatives of its top R (~2 %–10 % of R on trained
embeddings; ~500 of 54,000 per query on the 60k bench), not all negatives above its
lowest positive. Where more than 1.25 R remain (untrained embeddings, or the very
first blocks, which start from K = R/32), they are cut at the row's R-th best negative.

Each candidate is located among its row's sorted positives by one binary search,
giving c_j = positives above it. Then n_m = #{j : c_j < m} is a step function of m,
constant between consecutive sorted c_j, and over a run of m with n_m = t the sum
has a closed form, Σ_{m=lo}^{hi} m/(m + t) = (hi − lo + 1) − t·(H_{hi+t} − H_{lo−1+t})
with H the harmonic numbers. So the work per query is its share of the sgemm, one
float sort of its R positive scores, a comparison pass over its row, and
O(candidates), all in numpy calls on whole blocks. Blocks run as independent tasks,
one per core (each with a single-threaded sgemm; numpy releases the GIL in all the
large calls), so the cores never wait for each other.

Ties: equal scores rank by ascending reference index (``neighbors.py``). Only a
negative whose score equals one of the query's positives depends on it (at float32
resolution a few per query at R ≈ 6,000); for those the equal positives' indices are
compared, so the counts stay exact.
The short nearest-neighbour list (Recall@K, kNN vote) comes from the same candidates
(k ≤ R: the k best positives and the candidates with fewer than k positives above),
else from a top-k of the same score block.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import torch

from sphere_engine.metrics.blas_threads import single_blas_thread
from sphere_engine.metrics.neighbors import exact_rows, sort_rows
from sphere_engine.metrics.precision_sums import harmonic_numbers, precision_sums
from sphere_engine.metrics.sorted_rows import positions_right

_BLOCK_ROWS = 256  # queries per block: sgemm at ~85 % of peak (128: ~70 %)
_CANDIDATE_BYTES = 56  # per candidate: row, column, value, keys, counts, sort order
_TIE_CHUNK = 256  # tied negatives compared against all positives at once


@dataclass(frozen=True)
class RankedBlock:
    """One block of queries: their nearest neighbours and their positives' ranks."""

    queries: np.ndarray  # (q,) int64 query rows
    nearest: np.ndarray  # (q, k) int64 reference rows, nearest first (ties by index)
    hits_in_r: np.ndarray  # (q,) positives among the R nearest
    precision_sum: np.ndarray  # (q,) Σ_{i ≤ R} P@i · rel(i), i.e. R · AP@R


@dataclass(frozen=True)
class _Part:
    """Some rows of a block: scores with the class columns at −inf (negatives only),
    the class columns' scores (the query's own at −inf) and their sorted positives."""

    negatives: np.ndarray  # (p, n) float32
    positive_scores: np.ndarray  # (p, w) float32, w = R (+ 1 with the query itself)
    positives: np.ndarray  # (p, R) float32 ascending
    positive_ids: np.ndarray  # (w,) int64 reference index of each class column
    ids: np.ndarray  # (n,) int64 reference index of each column

    def rows(self, chosen: slice | np.ndarray) -> _Part:
        return _Part(
            self.negatives[chosen], self.positive_scores[chosen], self.positives[chosen],
            self.positive_ids, self.ids,
        )  # fmt: skip


def _candidate_mask(part: _Part, guess: int, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mask, count per row) of the candidates: per row, negatives ≥ θ = a_K for a K
    that passes the check of the module doc. ``mask``: p × n' bool buffer, n' ≥ n a
    multiple of 8, its columns past n False.

    K is the guess where it passes. Where it fails, c = the negatives ≥ a_K is below
    K − 1; K' = c + 1 < K then passes for sure (a_K' ≤ a_K has at least those c
    negatives above it), and is the largest K that this count vouches for.
    """
    k = min(max(guess, 1), part.positives.shape[1])
    theta = part.positives[:, k - 1].copy()
    counts = _mask_counts(part.negatives, theta, mask)
    failed = counts < k - 1
    if failed.any():
        # One more pass over the whole block (the passing rows' masks come out the
        # same): about the CPU of a row-by-row pass over the failed ones, in one call
        # that releases the GIL.
        theta[failed] = part.positives[failed, counts[failed]]  # a_{c+1}, 0-based c
        counts = _mask_counts(part.negatives, theta, mask)
    return mask, counts


def _mask_counts(negatives: np.ndarray, theta: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Fill ``mask`` with negatives ≥ θ per row; return the count per row."""
    np.greater_equal(negatives, theta[:, None], out=mask[:, : negatives.shape[1]])
    # Bytes of 0/1 summed eight at a time: a uint64 word times 0x0101…01 holds its
    # byte sum in the top byte (~3× numpy's row sum of bools).
    words = mask.view(np.uint64)
    return ((words * np.uint64(0x0101010101010101)) >> np.uint64(56)).sum(axis=1).astype(np.int64)


def _candidates_above(
    part: _Part, counts: np.ndarray, columns: np.ndarray, values: np.ndarray
) -> np.ndarray:
    """For each candidate negative (grouped by row, ``counts`` per row), the positives
    ranked above it."""
    r = part.positives.shape[1]
    rows = np.repeat(np.arange(counts.size), counts)
    found = positions_right(part.positives, values, counts)
    above = r - found  # positives ≤ a candidate are not above it, ties aside
    tied = np.flatnonzero(found > 0)
    tied = tied[part.positives[rows[tied], found[tied] - 1] == values[tied]]
    for start in range(0, tied.size, _TIE_CHUNK):  # equal score: the lower index ranks first
        chunk = tied[start : start + _TIE_CHUNK]
        same = part.positive_scores[rows[chunk]] == values[chunk, None]
        earlier = part.positive_ids[None, :] < part.ids[columns[chunk], None]
        above[chunk] += np.count_nonzero(same & earlier, axis=1)
    return above


def _nearest(
    part: _Part, k: int, counts: np.ndarray, columns: np.ndarray, values: np.ndarray,
    above: np.ndarray,
) -> np.ndarray:  # fmt: skip
    """The k nearest reference rows of each row of a part (k ≤ R), from what counting
    found: a positive in the top k is among the k best positives; a negative there has
    fewer than k positives above it (so is a candidate). The k best of those few, by
    score and then index, are the k nearest."""
    count, r = part.positives.shape
    width = part.positive_scores.shape[1]
    best = np.flatnonzero(part.positive_scores >= part.positives[:, r - k, None])
    best_rows, best_columns = np.divmod(best, width)
    close = np.flatnonzero(above < k)
    rows = np.concatenate([best_rows, np.repeat(np.arange(count), counts)[close]])
    scores = np.concatenate([part.positive_scores.ravel()[best], values[close]])
    ids = np.concatenate([part.positive_ids[best_columns], part.ids[columns[close]]])
    order = np.lexsort((ids, -scores, rows))
    rows, ids = rows[order], ids[order]
    place = np.arange(rows.size) - np.searchsorted(rows, np.arange(count))[rows]
    keep = place < k
    nearest = np.empty((count, k), dtype=np.int64)
    nearest[rows[keep], place[keep]] = ids[keep]
    return nearest


def _below_the_bar(
    counts: np.ndarray, columns: np.ndarray, values: np.ndarray, r: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Drop a crowded row's candidates below its R-th best negative (the bar).

    At least R negatives score ≥ the bar, so a sample below it ranks beyond R; a
    positive below it has all those kept above it (m + n_m > R). Only rows with more
    than 1.25 R candidates (untrained embeddings) pay for the partition.
    """
    crowded = np.flatnonzero(counts > r + r // 4)
    if crowded.size == 0:
        return counts, columns, values
    bounds = np.concatenate([[0], np.cumsum(counts)])
    keep = np.ones(values.size, dtype=bool)
    for row in crowded:
        start, stop = bounds[row], bounds[row + 1]
        own = values[start:stop]
        bar = np.partition(own, own.size - r)[own.size - r]
        keep[start:stop] = own >= bar
    rows = np.repeat(np.arange(counts.size), counts)
    return np.bincount(rows[keep], minlength=counts.size), columns[keep], values[keep]


def _count_part(
    part: _Part, k: int, guess: int, harmonic: np.ndarray, candidate_cap: int, mask: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(nearest or empty, hits_in_r, precision_sum) of a part's rows; ``mask``: a
    buffer as ``_candidate_mask`` takes it."""
    count, r = part.positives.shape
    mask, per_row = _candidate_mask(part, guess, mask)
    hits = np.empty(count, dtype=np.int64)
    precision = np.empty(count, dtype=np.float64)
    nearest = np.empty((count, k if 0 < k <= r else 0), dtype=np.int64)
    start = 0
    while start < count:  # rows in groups whose candidates fit the memory budget
        total = np.cumsum(per_row[start:])
        stop = start + max(1, int(np.searchsorted(total, candidate_cap, side="right")))
        sub, counts = part.rows(slice(start, stop)), per_row[start:stop]
        flat = np.flatnonzero(mask[start:stop])  # row-major: grouped by row
        rows, columns = np.divmod(flat, mask.shape[1])
        values = sub.negatives[rows, columns]
        counts, columns, values = _below_the_bar(counts, columns, values, r)
        above = _candidates_above(sub, counts, columns, values)
        hits[start:stop], precision[start:stop] = precision_sums(counts, above, r, harmonic)
        if nearest.shape[1]:
            nearest[start:stop] = _nearest(sub, k, counts, columns, values, above)
        start = stop
    return nearest, hits, precision


@dataclass(frozen=True)
class _Search:
    """What every block of one ``ranked_blocks`` call shares."""

    queries: np.ndarray
    reference: np.ndarray  # as given (the tied-rows fallback ranks against it)
    # Reference rows in class order (each class contiguous), stored transposed (d × n,
    # C-contiguous): OpenBLAS's sgemm of a one-class block (~100 rows at 10k × 128)
    # runs ~20 % faster on it than on the transposed view of an n × d array.
    by_class_t: np.ndarray
    by_class_sq: np.ndarray  # their squared norms (the Euclidean metric)
    order: np.ndarray  # reference index of each class-ordered column
    position: np.ndarray  # class-ordered column of each reference index
    classes: np.ndarray  # the reference's classes, sorted
    starts: np.ndarray  # each class's first class-ordered column
    exclude_self: bool
    metric: str
    k: int
    fetch: int
    rows: int  # queries per block
    candidate_cap: int  # candidates handled at once (memory)
    buffers: threading.local = field(default_factory=threading.local)

    @classmethod
    def build(
        cls,
        queries: np.ndarray,
        reference: np.ndarray,
        reference_labels: np.ndarray,
        widest: int,
        queried: int,
        *,
        exclude_self: bool,
        k: int,
        metric: str,
        budget: int,
    ) -> _Search:
        """The reference in class order and the block size: as many rows as fit
        ``budget`` bytes with their scores, mask, the class columns twice (``widest``
        of them at most) and the per-row work arrays; at most ``_BLOCK_ROWS`` and the
        ``queried`` rows."""
        size = reference.shape[0]
        order = np.argsort(reference_labels, kind="stable")  # each class contiguous
        position = np.empty_like(order)
        position[order] = np.arange(size)
        classes, starts = np.unique(reference_labels[order], return_index=True)
        by_class_t = np.ascontiguousarray(reference[order].T)
        k = min(k, size - int(exclude_self))
        rows = max(1, min(budget // (5 * size + 12 * widest + 64), _BLOCK_ROWS, queried))
        return cls(
            queries, reference, by_class_t, (by_class_t * by_class_t).sum(0), order, position,
            classes, starts, exclude_self, metric, k, min(k + 1, size - int(exclude_self)),
            rows, max(size, budget // (4 * _CANDIDATE_BYTES)),
        )  # fmt: skip

    def first_column(self, label: int) -> int:
        """The class-ordered column where class ``label`` starts."""
        return int(self.starts[np.searchsorted(self.classes, label)])

    def buffer(self) -> tuple[np.ndarray, np.ndarray]:
        """This thread's (rows × n) float32 score and bool mask buffers, reused by each
        block it runs."""
        if not hasattr(self.buffers, "scores"):
            size = self.by_class_t.shape[1]
            self.buffers.scores = np.empty((self.rows, size), dtype=np.float32)
            # Padded to whole uint64 words for the counting (``_candidate_mask``).
            self.buffers.mask = np.zeros((self.rows, -(-size // 8) * 8), dtype=bool)
        return self.buffers.scores, self.buffers.mask


class _Guesses:
    """K's guess per class (see the module doc): a block reads its class's when it
    starts and updates it when it ends. A class none of whose blocks has finished yet
    starts from the share of R of the last finished block of any class (classes of one
    embedding are alike; at 10k / 100 classes every class is a single block, and R/32
    left ~27 % of rows crowded), the very first blocks from R/32."""

    def __init__(self) -> None:
        self.per_class: dict[int, int] = {}
        self.latest_share = 1 / 32  # of R: a few % of the top R are negatives

    def start(self, index: int, r: int) -> int:
        return self.per_class.get(index, max(1, int(self.latest_share * r)))

    def finish(self, index: int, r: int, block: RankedBlock) -> None:
        # About as many positives as top-R negatives fall below the R-th score (see
        # the module doc): the median passes for about half the rows, the others
        # retry once with the K their count vouches for. Set when the block ends, not
        # when it is yielded, so that the class's next blocks already start from it.
        guess = max(1, int(np.median(r - block.hits_in_r)))
        self.per_class[index] = guess
        self.latest_share = guess / r


def _class_blocks(
    query_labels: np.ndarray, query_rows: np.ndarray, rows: int
) -> list[tuple[int, np.ndarray]]:
    """(class index, up to ``rows`` query rows of that class) for every queried row."""
    grouped = query_rows[np.argsort(query_labels[query_rows], kind="stable")]
    bounds = np.flatnonzero(np.diff(query_labels[grouped])) + 1
    return [
        (index, members[begin : begin + rows])
        for index, members in enumerate(np.split(grouped, bounds))
        for begin in range(0, members.size, rows)
    ]


def _run_in_order(
    run: Callable[[tuple[int, np.ndarray]], RankedBlock],
    tasks: list[tuple[int, np.ndarray]],
    threads: int,
) -> Iterator[RankedBlock]:
    """``run`` of each task on ``threads`` threads, yielded in task order. Each thread
    runs its own blocks start to end, single-threaded sgemm included: no barrier
    between threads, no BLAS worker spinning beside the numpy passes; up to 4 tasks a
    thread are queued ahead, so no thread idles on a slow one."""
    with ThreadPoolExecutor(threads) as pool, single_blas_thread():
        pending: deque = deque()
        for task in tasks:
            pending.append(pool.submit(run, task))
            if len(pending) > 4 * threads:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def ranked_blocks(
    queries: np.ndarray,
    query_labels: np.ndarray,
    reference: np.ndarray,
    reference_labels: np.ndarray,
    positives: np.ndarray,
    query_rows: np.ndarray,
    *,
    exclude_self: bool,
    k: int,
    metric: str,
    memory_budget_mb: float,
) -> Iterator[RankedBlock]:
    """Blocks of ``query_rows`` (each with ``positives`` R ≥ 1; same array length as
    ``query_labels``): their k nearest and their positives' ranks (see the module doc).

    Arrays as in ``retrieval_scores``; k is clipped to the number of candidates.
    Blocks hold queries of one class; one per thread at a time, each as large as fits
    its share of ``memory_budget_mb`` with its score rows and work arrays (up to
    4 blocks per thread are queued ahead; what they hold is small).
    """
    threads = max(1, torch.get_num_threads())
    search = _Search.build(
        queries, reference, reference_labels,
        widest=int(positives[query_rows].max()) + int(exclude_self), queried=query_rows.size,
        exclude_self=exclude_self, k=k, metric=metric,
        budget=int(memory_budget_mb * 2**20) // threads,
    )  # fmt: skip
    guesses = _Guesses()

    def run(task: tuple[int, np.ndarray]) -> RankedBlock:
        index, ids = task
        r = int(positives[ids[0]])
        first = search.first_column(query_labels[ids[0]])
        block = _score_and_count(search, ids, r, first, guesses.start(index, r))
        guesses.finish(index, r, block)
        return block

    yield from _run_in_order(run, _class_blocks(query_labels, query_rows, search.rows), threads)


def _score_and_count(
    search: _Search, ids: np.ndarray, r: int, first: int, guess: int
) -> RankedBlock:
    """Nearest neighbours and positives' ranks of a block of queries of one class."""
    scores, mask = search.buffer()
    block = np.ascontiguousarray(search.queries[ids])
    scores = scores[: ids.size]
    # Each thread runs its own single-threaded sgemm (``ranked_blocks`` limits BLAS to
    # one thread): no BLAS worker spinning while the numpy passes below run.
    np.matmul(block, search.by_class_t, out=scores)
    if search.metric == "euclidean":  # negated squared distance, as ``score_rows``
        scores *= 2
        scores -= search.by_class_sq[None, :]
        scores -= (block * block).sum(1)[:, None]
    if search.exclude_self:
        scores[np.arange(ids.size), search.position[ids]] = -np.inf

    k, fetch = search.k, search.fetch
    nearest = None
    if k > r:  # the counting's candidates hold the k nearest only for k ≤ R
        top_scores, top_columns = torch.topk(torch.from_numpy(scores), fetch, dim=1)
        top_scores, nearest = sort_rows(top_scores.numpy(), search.order[top_columns.numpy()])
        if fetch > k:
            tied = np.flatnonzero(top_scores[:, k - 1] == top_scores[:, k])
            nearest = nearest[:, :k].copy()
            if tied.size:
                _, nearest[tied] = exact_rows(
                    block[tied], ids[tied], search.reference, k, search.exclude_self,
                    search.metric,
                )  # fmt: skip

    width = r + int(search.exclude_self)  # the class's columns, the query's own included
    positive_scores = scores[:, first : first + width].copy()
    scores[:, first : first + width] = -np.inf  # what is left: the negatives
    # The query's own −inf sorts first and is dropped.
    sorted_positives = np.sort(positive_scores, axis=1)[:, width - r :]
    part = _Part(
        scores, positive_scores, sorted_positives, search.order[first : first + width],
        search.order,
    )  # fmt: skip
    harmonic = harmonic_numbers(r)
    counted, hits, precision_sum = _count_part(
        part, k, guess, harmonic, search.candidate_cap, mask[: ids.size]
    )
    return RankedBlock(ids, counted if nearest is None else nearest, hits, precision_sum)
