"""The job's side channel (``spherescope._job.JobLink``) without a real job."""

from __future__ import annotations

import threading
import time

import pytest

from sphere_engine.distributed import DistributedContext
from spherescope import _job
from spherescope._job import JobLink


class SlowStore:
    """A c10d store whose calls take a while (as a loaded machine's do)."""

    def __init__(self) -> None:
        self.inside = threading.Event()

    def add(self, key: str, value: int) -> int:
        self.inside.set()
        time.sleep(0.3)
        return 1


def test_stopping_waits_for_the_store_call_under_way_and_lets_go_of_the_store(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run's end stops its side channel before the rank exits: a thread still inside
    a store call when the interpreter tears down aborts the process (torch 2.13)."""
    store = SlowStore()
    monkeypatch.setattr(_job, "_job_store", lambda run_id: store)
    link = JobLink(DistributedContext(rank=1, world_size=2), "run", interval_s=0.001)
    link.start(lambda message: None)
    assert store.inside.wait(5)
    thread = link._thread
    assert thread is not None
    link.stop()
    assert not thread.is_alive()
    assert link.store is None
    link.stop()  # idempotent
