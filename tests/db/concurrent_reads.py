"""Reading a store over and over while something changes its files."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from db import queries


@dataclass
class Reads:
    """The row counts the reads saw, and what they raised."""

    counts: set[int] = field(default_factory=set)
    errors: list[BaseException] = field(default_factory=list)


@contextmanager
def reading_series(store, run_ids: list[str] | str, name: str) -> Iterator[Reads]:
    """Read ``name``'s whole series of ``run_ids`` in a loop on a thread for the
    duration of the block."""
    reads = Reads()
    done = threading.Event()

    def read_loop() -> None:
        while not done.is_set():
            try:
                frame = queries.metric_series(store, run_ids, [name], max_points=100_000)
                reads.counts.add(len(frame))
            except BaseException as error:
                reads.errors.append(error)

    reader = threading.Thread(target=read_loop)
    reader.start()
    try:
        yield reads
    finally:
        done.set()
        reader.join()
