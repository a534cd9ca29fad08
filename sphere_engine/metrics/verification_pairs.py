"""Which pairs a verification evaluation scores (SCIENCE.md §7), and their cosines.

Genuine pairs are all unordered same-class pairs; above ``max_genuine`` a uniform
sample of distinct ones drawn with the seed. Impostor pairs are a uniform sample of
distinct different-class pairs drawn with the seed (all of them when there are at
most ``max_impostor``). Sampling never enumerates all N(N−1)/2 pairs: it draws pair
numbers and decodes them (``_decode_triangular``).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from sphere_engine.metrics.inputs import to_numpy

_SCORE_CHUNK = 8_192  # pairs per gather: two 128-d chunks (4 MB each) stay in cache


def _decode_triangular(numbers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pair number k ↦ (i, j), i < j, in the order k = j(j−1)/2 + i."""
    numbers = numbers.astype(np.int64)
    j = ((1 + np.sqrt(1 + 8 * numbers.astype(np.float64))) // 2).astype(np.int64)
    # float rounding can put j one off near perfect squares: correct both ways
    j -= (j * (j - 1) // 2) > numbers
    j += ((j + 1) * j // 2) <= numbers
    return numbers - j * (j - 1) // 2, j


def _sorted_distinct(values: np.ndarray) -> np.ndarray:
    """np.unique of a 1-D array by sorting (numpy 2.4's np.unique is ~100× slower here)."""
    values = np.sort(values)
    return values[np.concatenate([[True], values[1:] != values[:-1]])]


def _choose_distinct(rng: np.random.Generator, population: int, count: int) -> np.ndarray:
    """``count`` distinct numbers from range(population), in random order."""
    if count >= population:
        return rng.permutation(population)
    if count * 4 > population:
        return rng.permutation(population)[:count]
    drawn = _sorted_distinct(rng.integers(0, population, size=int(count * 1.1) + 64))
    while drawn.size < count:  # rare: too many collisions in the first draw
        more = rng.integers(0, population, size=count - drawn.size + 64)
        drawn = _sorted_distinct(np.concatenate([drawn, more]))
    return drawn[rng.permutation(drawn.size)[:count]]


def genuine_total(labels: np.ndarray) -> int:
    """Number of same-class pairs."""
    _, counts = np.unique(labels, return_counts=True)
    return int((counts * (counts - 1) // 2).sum())


def genuine_pairs(
    labels: np.ndarray, max_pairs: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Same-class pairs (a, b) of sample indices: all, or ``max_pairs`` sampled."""
    order = np.argsort(labels, kind="stable")
    _, starts, counts = np.unique(labels[order], return_index=True, return_counts=True)
    per_class = counts * (counts - 1) // 2
    offsets = np.concatenate([[0], np.cumsum(per_class)])
    total = int(offsets[-1])
    numbers = np.arange(total) if total <= max_pairs else _choose_distinct(rng, total, max_pairs)
    numbers = np.sort(numbers)  # grouped by class: a cheaper gather later
    group = np.searchsorted(offsets, numbers, side="right") - 1
    i, j = _decode_triangular(numbers - offsets[group])
    return order[starts[group] + i], order[starts[group] + j]


def impostor_pairs(
    labels: np.ndarray, max_pairs: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Different-class pairs (a, b): all when at most ``max_pairs``, else a sample."""
    size = labels.size
    total_pairs = size * (size - 1) // 2
    _, counts = np.unique(labels, return_counts=True)
    total = total_pairs - int((counts * (counts - 1) // 2).sum())
    if total <= max_pairs:
        a, b = np.triu_indices(size, 1)
        keep = labels[a] != labels[b]
        return a[keep], b[keep]
    # Draw pair numbers with replacement, keep the distinct impostor ones, repeat until
    # there are enough, then keep a uniform subset: a uniform sample of distinct pairs.
    fraction = total / total_pairs
    numbers = np.empty(0, dtype=np.int64)
    while numbers.size < max_pairs:
        want = int((max_pairs - numbers.size) / fraction * 1.05) + 64
        drawn = rng.integers(0, total_pairs, size=want)
        a, b = _decode_triangular(drawn)
        numbers = _sorted_distinct(np.concatenate([numbers, drawn[labels[a] != labels[b]]]))
    numbers = numbers[np.sort(rng.permutation(numbers.size)[:max_pairs])]
    return _decode_triangular(numbers)


def check_pairs(pairs: Any, num_samples: int, labels: np.ndarray | None) -> tuple[np.ndarray, ...]:
    """(a, b, is_genuine) from an LFW-style P × 2 (indices) or P × 3 (+ same flag) array."""
    array = to_numpy(pairs, "pairs")
    if array.ndim != 2 or array.shape[1] not in (2, 3) or array.shape[0] == 0:
        raise ValueError(
            f"pairs must be a non-empty P × 2 (index_a, index_b) or P × 3 (+ is_same) "
            f"array; got shape {tuple(array.shape)}"
        )
    if not (np.issubdtype(array.dtype, np.integer) or array.dtype == np.bool_):
        raise ValueError(f"pairs must hold integers; got dtype {array.dtype}")
    a, b = array[:, 0].astype(np.int64), array[:, 1].astype(np.int64)
    bad = (a < 0) | (a >= num_samples) | (b < 0) | (b >= num_samples)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"pairs row {row} has index ({a[row]}, {b[row]}) outside 0..{num_samples - 1}"
        )
    if array.shape[1] == 3:
        flags = array[:, 2]
        if not np.isin(flags, (0, 1)).all():
            raise ValueError("pairs column 3 (is_same) must be 0 or 1")
        return a, b, flags.astype(bool)
    if labels is None:
        raise ValueError("labels are needed when pairs have no is_same column (P × 2)")
    return a, b, labels[a] == labels[b]


def cosine_scores(unit: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """cos(f̂_a, f̂_b) for each pair (float32), gathered in cache-sized chunks.

    numpy releases the GIL in the gathers and dots, so the chunks are shared between
    threads (one per core): the work is memory-bound and a single thread leaves half
    the bandwidth of a 2-core machine idle.
    """
    scores = np.empty(a.size, dtype=np.float32)
    threads = max(1, min(os.cpu_count() or 1, -(-a.size // _SCORE_CHUNK)))

    def score(first: int) -> None:
        for start in range(first, a.size, _SCORE_CHUNK * threads):
            stop = start + _SCORE_CHUNK
            scores[start:stop] = np.einsum("ij,ij->i", unit[a[start:stop]], unit[b[start:stop]])

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(score, range(0, _SCORE_CHUNK * threads, _SCORE_CHUNK)))
    return scores


def all_genuine_scores(unit: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Scores of every genuine pair, in ``genuine_pairs``' order when it takes them all.

    One Gram matrix per class instead of a gather per pair: pair k = j(j−1)/2 + i of a
    class is row j, column i < j of its Gram matrix, i.e. its strict lower triangle in
    row-major order.
    """
    order = np.argsort(labels, kind="stable")
    _, starts, counts = np.unique(labels[order], return_index=True, return_counts=True)
    parts = []
    for start, count in zip(starts, counts, strict=True):
        members = unit[order[start : start + count]]
        parts.append((members @ members.T)[np.tril_indices(count, -1)])
    return np.concatenate(parts).astype(np.float32, copy=False)
