"""``PeriodicThread``: a worker's background check, run at once and then every
``interval`` seconds until stopped (the reaper, the reconcile pass).

A pass that raises is logged and the next one runs: a broker away for a moment or a
store being written must not end a check the worker relies on for its whole life.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class PeriodicThread(threading.Thread):
    """Calls ``work`` at once and then every ``interval`` seconds until ``stop``."""

    def __init__(self, name: str, interval: float, work: Callable[[], object]) -> None:
        super().__init__(name=name, daemon=True)
        self.interval, self.work = interval, work
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            try:
                self.work()
            except Exception:  # logged; the next pass runs (see the module docstring)
                log.exception("%s: pass failed", self.name)
            self.stopped.wait(self.interval)

    def stop(self) -> None:
        self.stopped.set()
