"""How many DataLoader workers decode a run's images (``data.num_workers``)."""

from __future__ import annotations

import os
from typing import Any

#: ``data.num_workers = -1``: half the cores, at most this many.
MAX_AUTO_WORKERS = 8


def resolve_num_workers(setting: int, dataset: Any) -> int:
    """``setting`` ≥ 0 as given; -1: none for in-memory data (batches are indexed
    tensors), else half the machine's cores (at most 8, at least 1) so decoding runs
    off the main process."""
    if setting >= 0:
        return setting
    if hasattr(dataset, "get_batch"):
        return 0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(MAX_AUTO_WORKERS, (cores or 2) // 2))
