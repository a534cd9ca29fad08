"""Blocks of one class's queries, run on threads and yielded in order."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from sphere_engine.metrics.blas_threads import single_blas_thread
from sphere_engine.metrics.positive_ranks.parts import RankedBlock


def class_blocks(
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


def run_in_order(
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
