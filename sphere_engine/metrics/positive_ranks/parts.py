"""What rank counting works on and gives back: some rows of a block (``Part``) and a
block's result (``RankedBlock``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class RankedBlock:
    """One block of queries: their nearest neighbours and their positives' ranks."""

    queries: np.ndarray  # (q,) int64 query rows
    nearest: np.ndarray  # (q, k) int64 reference rows, nearest first (ties by index)
    hits_in_r: np.ndarray  # (q,) positives among the R nearest
    precision_sum: np.ndarray  # (q,) Σ_{i ≤ R} P@i · rel(i), i.e. R · AP@R


@dataclass(frozen=True)
class Part:
    """Some rows of a block: scores with the class columns at −inf (negatives only),
    the class columns' scores (the query's own at −inf) and their sorted positives."""

    negatives: np.ndarray  # (p, n) float32
    positive_scores: np.ndarray  # (p, w) float32, w = R (+ 1 with the query itself)
    positives: np.ndarray  # (p, R) float32 ascending
    positive_ids: np.ndarray  # (w,) int64 reference index of each class column
    ids: np.ndarray  # (n,) int64 reference index of each column

    def rows(self, chosen: slice | np.ndarray) -> Part:
        return Part(
            self.negatives[chosen], self.positive_scores[chosen], self.positives[chosen],
            self.positive_ids, self.ids,
        )  # fmt: skip
