"""The SDK's writer thread: the store work a user's training step must not wait for.

Three costs would otherwise land inside whichever user step happened to trigger them:
the batched finish of K logged steps (NumPy over K × N × d raw values), the tracker's
flush (one Parquet chunk per table, fsynced, every second) and its compaction (every 30
flushes). ``Delivery`` runs them, in
the order they were handed over, on one daemon thread that owns the tracker; the user's
thread only hands over batches (one queue put every ~32 logged steps or ~0.5 s).

Failed store writes are contained by ``SafeWriter`` on that thread, as before (warn
once, keep the rows, retry, record the problem on the run). A task that fails in any
other way (a bug) is recorded the same way and warned about, never raised into the
user's training. A ``strict`` run writes inline instead: it asked for failures to be
raised at the call that caused them. The queue is bounded, so a store that cannot keep
up slows the user's loop down rather than growing memory without limit.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

from spherescope._writer import SafeWriter

Task = Callable[[], None]

# Batches handed over and not yet written: at ~32 steps each, a store 64 batches behind
# makes the user's thread wait (bounded memory, as the tracker's own buffer bound)
MAX_QUEUED_BATCHES = 64


class Delivery:
    """Runs tasks (``submit``) in order on one writer thread, or inline (``background``
    False); ``close()`` waits for everything submitted and stops the thread."""

    def __init__(self, writer: SafeWriter, *, background: bool) -> None:
        self.writer = writer
        self._queue: queue.Queue[Task | None] | None = None
        self._thread: threading.Thread | None = None
        if background:
            self._queue = queue.Queue(maxsize=MAX_QUEUED_BATCHES)
            self._thread = threading.Thread(
                target=self._serve, name=f"spherescope-writer-{writer.run_id}", daemon=True
            )
            self._thread.start()

    @property
    def background(self) -> bool:
        return self._queue is not None

    def submit(self, task: Task) -> None:
        if self._queue is None:
            task()  # strict: a failed write raises here, in the caller's step
            return
        self._queue.put(task)

    def close(self) -> None:
        """Wait until every submitted task has run; idempotent."""
        if self._thread is None or self._queue is None:
            return
        self._queue.put(None)
        self._thread.join()
        self._thread = self._queue = None

    def _serve(self) -> None:
        assert self._queue is not None
        while (task := self._queue.get()) is not None:
            try:
                task()
            except Exception as error:  # never into the user's training: recorded, warned
                self.writer.record_failure(error)
