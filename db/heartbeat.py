"""A daemon thread that writes a run's heartbeat while the run's process works.

The heartbeat comes from the process that trains, independently of the tracker's
flushes, so a long evaluation or a slow data set does not look like a dead worker,
while a killed process stops beating at once (the reaper then marks the run `lost`).
``heartbeat_interval()`` is the one reader of ``SPHERESCOPE_HEARTBEAT_S``, for every
process that runs a run (the worker, ``spherescope train``, the SDK).
"""

from __future__ import annotations

import logging
import os
import threading
from types import TracebackType
from typing import Protocol

log = logging.getLogger(__name__)

HEARTBEAT_ENV = "SPHERESCOPE_HEARTBEAT_S"
DEFAULT_HEARTBEAT_S = 2.0


def heartbeat_interval() -> float:
    """Seconds between two heartbeats of a running run: ``SPHERESCOPE_HEARTBEAT_S``
    (unset or empty: 2); a value that is not a positive number is a ``ValueError``."""
    raw = os.environ.get(HEARTBEAT_ENV, "").strip()
    if not raw:
        return DEFAULT_HEARTBEAT_S
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{HEARTBEAT_ENV} must be a number of seconds, got {raw!r}") from None
    if not value > 0:
        raise ValueError(f"{HEARTBEAT_ENV} must be > 0 seconds, got {raw!r}")
    return value


class HeartbeatStore(Protocol):
    def heartbeat(self, run_id: str, step: int | None = None, total: int | None = None) -> None: ...


class Heartbeat:
    """``with Heartbeat(store, run_id, interval=2.0): train()`` beats every ``interval`` s."""

    def __init__(self, store: HeartbeatStore, run_id: str, interval: float) -> None:
        if interval <= 0:
            raise ValueError(f"heartbeat interval: {interval!r} must be positive")
        self.store, self.run_id, self.interval = store, run_id, interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"heartbeat-{run_id}", daemon=True)

    def _beat(self) -> None:
        while not self._stop.is_set():
            try:
                self.store.heartbeat(self.run_id)
            except OSError as error:  # a full disk: one line per beat, not a traceback
                log.warning("heartbeat of run %s failed: %s", self.run_id, error)
            except Exception:  # a missed beat must not kill the run; the next one retries
                log.exception("heartbeat of run %s failed", self.run_id)
            self._stop.wait(self.interval)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=self.interval + 5.0)
