"""Start, heartbeat and end of an SDK run in the store (the ``external`` kind).

Kept in one small class on purpose: when the shared run lifecycle (issue 9: status
transitions, heartbeat thread, end of run with compaction, failure recording) lands in
worker/db, ``RunLifecycle`` is the one place to swap for it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from db.store import RunStore

HEARTBEAT_ENV = "SPHERESCOPE_HEARTBEAT_S"  # the worker reads the same variable


def heartbeat_interval() -> float:
    raw = os.environ.get(HEARTBEAT_ENV, "2.0")
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{HEARTBEAT_ENV} must be a number of seconds, got {raw!r}") from None
    if not value > 0:
        raise ValueError(f"{HEARTBEAT_ENV} must be > 0 seconds, got {raw!r}")
    return value


class RunLifecycle:
    """Creates the run as ``running``, beats while it lives, ends it (with compaction)."""

    def __init__(self, store: RunStore) -> None:
        self.store = store
        self.run_id = ""
        self.step: int | None = None  # latest step seen, shown as progress
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, config: Mapping[str, Any], name: str | None, tags: Iterable[str]) -> str:
        self.run_id = self.store.create_run(
            config, name, kind="external", tags=tags, status="running"
        )
        self.store.heartbeat(self.run_id)
        interval = heartbeat_interval()
        self._thread = threading.Thread(
            target=self._beat, args=(interval,), name=f"spherescope-heartbeat-{self.run_id}",
            daemon=True,  # a dying process must not be kept alive by it: the reaper sees silence
        )  # fmt: skip
        self._thread.start()
        return self.run_id

    def _beat(self, interval: float) -> None:
        while not self._stopped.wait(interval):
            try:
                self.store.heartbeat(self.run_id, self.step)
            except Exception:  # a store hiccup must not end the thread; the next beat retries
                continue

    def end(self, status: str, message: str = "", **fields: Any) -> None:
        """Stop beating, then set the terminal status and compact the run."""
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.store.end_run(self.run_id, status, message, **fields)
