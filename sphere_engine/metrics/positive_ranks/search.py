"""What every block of one search shares: the reference in class order, the block size
and each thread's reusable buffers."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

BLOCK_ROWS = 256  # queries per block: sgemm at ~85 % of peak (128: ~70 %)
CANDIDATE_BYTES = 56  # per candidate: row, column, value, keys, counts, sort order


@dataclass(frozen=True)
class Search:
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
    ) -> Search:
        """The reference in class order and the block size: as many rows as fit
        ``budget`` bytes with their scores, mask, the class columns twice (``widest``
        of them at most) and the per-row work arrays; at most ``BLOCK_ROWS`` and the
        ``queried`` rows."""
        size = reference.shape[0]
        order = np.argsort(reference_labels, kind="stable")  # each class contiguous
        position = np.empty_like(order)
        position[order] = np.arange(size)
        classes, starts = np.unique(reference_labels[order], return_index=True)
        by_class_t = np.ascontiguousarray(reference[order].T)
        k = min(k, size - int(exclude_self))
        rows = max(1, min(budget // (5 * size + 12 * widest + 64), BLOCK_ROWS, queried))
        return cls(
            queries, reference, by_class_t, (by_class_t * by_class_t).sum(0), order, position,
            classes, starts, exclude_self, metric, k, min(k + 1, size - int(exclude_self)),
            rows, max(size, budget // (4 * CANDIDATE_BYTES)),
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
            # Padded to whole uint64 words for the counting (``candidate_mask``).
            self.buffers.mask = np.zeros((self.rows, -(-size // 8) * 8), dtype=bool)
        return self.buffers.scores, self.buffers.mask
