"""worker/periodic.py: the reaper's and the reconcile pass's thread."""

from __future__ import annotations

import logging
import threading

import pytest

from worker.periodic import PeriodicThread


def test_a_failing_pass_is_logged_and_the_next_one_runs(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[int] = []
    third = threading.Event()

    def work() -> None:
        calls.append(len(calls))
        if len(calls) == 3:
            third.set()
        if len(calls) == 1:
            raise RuntimeError("broker away")

    thread = PeriodicThread("spherescope-test", 0.01, work)
    with caplog.at_level(logging.ERROR, logger="worker.periodic"):
        thread.start()
        assert third.wait(10), calls
        thread.stop()
        thread.join(10)
    assert not thread.is_alive() and thread.daemon
    [record] = caplog.records
    assert record.getMessage() == "spherescope-test: pass failed"
    assert "broker away" in caplog.text


def test_the_first_pass_runs_at_once_and_stop_ends_the_wait() -> None:
    ran = threading.Event()
    thread = PeriodicThread("spherescope-test", 3600, ran.set)
    thread.start()
    assert ran.wait(10)  # not after the hour's interval
    thread.stop()
    thread.join(10)
    assert not thread.is_alive()
