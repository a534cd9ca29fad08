"""The reaper: runs still marked ``running`` whose heartbeat stopped become ``lost``.

Tasks are acknowledged when they start, so Redis never re-runs a run whose worker
died; this check is what turns such a run into a visible outcome. It runs in every
worker's main process (``ReaperThread``) and once per ``spherescope status``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime

from db.store import RunStore
from worker import settings

log = logging.getLogger(__name__)


def reap_lost(
    store: RunStore, max_age_s: float | None = None, now: datetime | None = None
) -> list[str]:
    """Mark running runs without a heartbeat for ``max_age_s`` seconds as lost; their ids."""
    max_age_s = settings.lost_after() if max_age_s is None else max_age_s
    now = now or datetime.now(UTC)
    reaped = []
    for record in store.list_runs(status="running"):
        last = record.heartbeat_at or record.started_at or record.created_at
        age = (now - last).total_seconds() if last else float("inf")
        if age <= max_age_s:
            continue
        try:
            store.set_status(
                record.run_id,
                "lost",
                f"no heartbeat for {age:.0f} s: the worker running it stopped "
                f"(host {record.host or 'unknown'}); its data up to then is kept",
            )
        except ValueError:  # it ended between the listing and now (finished → lost is refused)
            continue
        log.warning("run %s marked lost (no heartbeat for %.0f s)", record.run_id, age)
        reaped.append(record.run_id)
    return reaped


class ReaperThread(threading.Thread):
    """Calls ``reap_lost`` and then ``also`` every ``interval`` seconds until stopped."""

    def __init__(self, interval: float, also: Callable[[], None] | None = None) -> None:
        super().__init__(name="spherescope-reaper", daemon=True)
        self.interval, self.also = interval, also
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            try:
                reap_lost(RunStore())
                if self.also is not None:
                    self.also()
            except Exception:  # a broken pass must not end the periodic check
                log.exception("reaper pass failed")
            self.stopped.wait(self.interval)

    def stop(self) -> None:
        self.stopped.set()
