"""Store writes that never kill the user's training (unless ``strict``).

Wraps the tracker of the run's ``db.lifecycle.RunLifecycle``: a write that fails warns
once, keeps its rows buffered (the tracker retries them on its next flush, every
``flush_interval``), drops the buffer once it holds more than ``max_buffer_rows`` rows
(bounded memory), and counts everything so that the run's end records the problem.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from typing import Any

from db.lifecycle import RunLifecycle
from db.writer_store import WriterTracker

log = logging.getLogger(__name__)

WRITE_ERRORS = (OSError, RuntimeError)  # StoreWriteError is a RuntimeError


class SafeWriter:
    """Calls the run tracker's methods; failures are contained unless ``strict``."""

    def __init__(
        self, lifecycle: RunLifecycle, *, strict: bool, max_buffer_rows: int = 200_000
    ) -> None:
        self.lifecycle, self.run_id, self.strict = lifecycle, lifecycle.run_id, strict
        self.max_buffer_rows = max_buffer_rows
        self.failures = 0
        self.dropped_rows = 0
        self.first_error: str | None = None
        self.last_error: str | None = None

    def call(self, method: Callable[..., Any], *args: Any) -> None:
        """``method`` is a bound method of ``self.tracker`` (looked up by the caller)."""
        try:
            method(*args)
        except WRITE_ERRORS as error:
            self.record_failure(error)
        # while the store fails, rows pile up between retries: keep them bounded
        if self.failures and self.tracker.buffered_rows() > self.max_buffer_rows:
            self._drop_buffer()

    @property
    def tracker(self) -> WriterTracker:
        return self.lifecycle.tracker

    def flush(self) -> None:
        self.call(self.tracker.flush)

    def final_flush(self) -> None:
        """The last flush before the run ends: what still cannot be written is dropped
        (and counted), so that the end of the run is recorded as it happened."""
        self.flush()
        if self.failures and self.tracker.buffered_rows():
            self._drop_buffer()

    def problem(self) -> dict[str, Any]:
        """What went wrong, for the run's status (empty when every write succeeded)."""
        if not self.failures:
            return {}
        return {
            "write_failures": self.failures,
            "write_dropped_rows": self.dropped_rows,
            "write_problem": self.first_error,
            "write_last_error": self.last_error,
        }

    def record_failure(self, error: Exception) -> None:
        """A failed write (or writer task) the caller caught: warn once, count it, record
        it on the run (``strict``: raise it)."""
        if self.strict:
            raise error
        message = f"{type(error).__name__}: {error}"
        self.failures += 1
        self.last_error = message
        if self.first_error is None:
            self.first_error = message
            warnings.warn(
                f"spherescope: run {self.run_id}: writing to the store failed ({message}); "
                "training goes on, values stay buffered and are retried",
                RuntimeWarning,
                stacklevel=4,
            )
        log.debug("run %s: store write failed: %s", self.run_id, message)

    def _drop_buffer(self) -> None:
        """Start over with an empty tracker: memory stays bounded, the loss is counted."""
        dropped = self.tracker.buffered_rows()
        try:
            self.lifecycle.reopen_tracker()
        except Exception:  # the store cannot even be read: keep buffering, bounded or not
            return
        self.dropped_rows += dropped
