"""The server's warm start (``app/warmup.py``): what it imports and reads."""

from __future__ import annotations

import logging

from app import warmup
from app.data import run_metrics


def test_it_imports_the_pages_dependencies_but_no_script() -> None:
    names = warmup.app_modules()
    assert {"app.data", "app.charts", "app.ui", "app.launch_form", "app.panels.downloads"} <= set(
        names
    )
    # scripts run main() (or a page) when imported; the server imports itself
    assert not [n for n in names if n.startswith(("app.main", "app.views", "app.server"))]


def test_it_reads_every_ended_runs_table_values_once(filled, monkeypatch) -> None:
    monkeypatch.setattr(run_metrics, "_ended_values", {})
    seconds = warmup.warm_up(warmup.STEPS[:2])  # torch (registries) is not this test's concern
    assert set(seconds) == {"imports", "runs table"}
    assert run_metrics._ended_values  # the first Runs render reads none of them again


def test_a_failing_step_is_logged_and_the_rest_still_run(caplog) -> None:
    done = []

    def broken() -> None:
        raise RuntimeError("no store")

    with caplog.at_level(logging.ERROR, logger="spherescope.app"):
        warmup.warm_up((("broken", broken), ("next", lambda: done.append(1))))
    assert done == [1]
    assert "broken failed" in caplog.text


def test_its_thread_keeps_streamlits_context_warning_out_of_the_log() -> None:
    record = logging.LogRecord("x", logging.WARNING, "", 0, "missing ScriptRunContext", (), None)
    record.threadName = warmup.THREAD_NAME
    assert not warmup._OwnThreadFilter().filter(record)
    record.threadName = "ScriptRunner.scriptThread"
    assert warmup._OwnThreadFilter().filter(record)
