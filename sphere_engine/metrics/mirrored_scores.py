"""Leave-one-out score rows from half the products: S = X Xᵀ is symmetric.

When the queries are the reference, the scores of a block of queries against the
columns of an earlier block are the transpose of that block's scores against it. The
blocks of ``positive_ranks`` are consecutive column ranges in class order, started
in that order, so within a window (a run of blocks) each block multiplies the
columns from its own first one on (and those outside the window), and hands a tile
to each later block of its window that has not started taking yet: its scores
against that block's columns, transposed while they are in cache. A block then takes
the tiles handed to it and multiplies the columns of any earlier block whose tile is
not there (still being computed on the other thread, or no slot was free) itself.
Nobody waits: a wait would turn every preemption of one thread (the cores are
shared) into idle time of the other (~0.2 s of 0.45 s at 10k with a load of 3).

Memory: the tiles live in one arena of fixed slots (``budget_bytes``), reused as
soon as taken: fresh pages for every receiving block cost about what the saved
products do (0.19 s of transposed copies for 0.13 s of sgemm saved at 10k). Blocks
finish about in order, so with B blocks in a window about (B/2)² tiles are held at
once; windows hold 2·√slots blocks. Where no slot is free, no tile is handed over.

Exactness: a product serves both (i, j) and (j, i). sgemm sums each element along d
in one order, the same for x_i·x_j and x_j·x_i, so the rows equal those of a full
product per block (checked on OpenBLAS's SkylakeX kernels); a one-row block is
multiplied as two rows, since the matrix-vector kernel sums in another order and
would not match the tiles other blocks compute for it.
"""

from __future__ import annotations

import math
import threading

import numpy as np


def _product(points: np.ndarray, reference_t: np.ndarray, out: np.ndarray) -> None:
    """out ← points @ reference_t by sgemm, also for a single row (see the module doc)."""
    if points.shape[0] == 1:
        out[:] = np.matmul(np.repeat(points, 2, axis=0), reference_t)[:1]
    else:
        np.matmul(points, reference_t, out=out)


class MirroredScores:
    """Score rows of leave-one-out blocks, most products computed once (module doc).

    ``starts``/``stops``: each block's column range in class order, blocks in the
    order they are submitted; ``fill`` is called once per block, from any thread.
    """

    def __init__(self, starts: np.ndarray, stops: np.ndarray, budget_bytes: int) -> None:
        self.starts, self.stops = starts, stops
        side = int((stops - starts).max())
        slots = budget_bytes // (4 * side * side)
        per_window = max(2, 2 * math.isqrt(slots))
        # The first block of each block's window: windows never span a gap in the
        # columns (a class that is not queried: nobody computes its tiles).
        self.window = np.zeros(starts.size, dtype=np.int64)
        for index in range(1, starts.size):
            first = self.window[index - 1]
            joined = starts[index] == stops[index - 1] and index - first < per_window
            self.window[index] = first if joined else index
        sizes = np.bincount(self.window)
        slots = min(slots, int((sizes * (sizes - 1) // 2).sum()))  # no more than tiles
        self.arena = np.empty((slots, side, side), dtype=np.float32)
        self.free = list(range(slots))  # a stack: the last freed (warm) slot goes first
        self.tiles: dict[tuple[int, int], int] = {}  # (giver, receiver) → slot
        self.taking: set[int] = set()  # blocks that take no more tiles
        self.lock = threading.Lock()

    def fill(
        self, index: int, points: np.ndarray, reference_t: np.ndarray, scores: np.ndarray
    ) -> None:
        """scores (w × n) ← points (w × d) @ reference_t (d × n, class order), the
        columns of earlier blocks of the window taken from their tiles where handed."""
        first, start, stop = self.window[index], self.starts[index], self.stops[index]
        begin = self.starts[first]
        if begin > 0:
            _product(points, reference_t[:, :begin], scores[:, :begin])
        _product(points, reference_t[:, start:], scores[:, start:])
        self._hand_over(index, first, scores)
        with self.lock:
            self.taking.add(index)
            handed = {
                earlier: self.tiles.pop((earlier, index))
                for earlier in range(first, index)
                if (earlier, index) in self.tiles
            }
        missing = begin  # first column of a run of earlier blocks without tiles
        for earlier in range(first, index):
            low, high = self.starts[earlier], self.stops[earlier]
            if earlier not in handed:
                continue
            if missing < low:
                _product(points, reference_t[:, missing:low], scores[:, missing:low])
            scores[:, low:high] = self.arena[handed[earlier], : stop - start, : high - low]
            missing = high
        if missing < start:
            _product(points, reference_t[:, missing:start], scores[:, missing:start])
        with self.lock:
            self.free.extend(handed.values())

    def _hand_over(self, index: int, first: int, scores: np.ndarray) -> None:
        """Tiles of ``scores`` for the later blocks of the window, as they will read
        them, while slots are free and the receiver has not started taking."""
        width = self.stops[index] - self.starts[index]
        later = index + 1
        while later < self.starts.size and self.window[later] == first:
            with self.lock:
                if not self.free:
                    return  # the rest multiply these columns themselves
                slot = None if later in self.taking else self.free.pop()
            if slot is not None:
                low, high = self.starts[later], self.stops[later]
                self.arena[slot, : high - low, :width] = scores[:, low:high].T
                with self.lock:
                    if later in self.taking:  # started meanwhile: it multiplied them
                        self.free.append(slot)
                    else:
                        self.tiles[(index, later)] = slot
            later += 1
