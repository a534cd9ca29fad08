"""What a fresh dashboard server does before its first visitor.

A new server process pays on its first page render for everything no render has done
yet: importing the app's modules (pandas-heavy data layer, Altair, the worker client),
DuckDB's first reads, the Runs table's last values of every ended run (read once per
process, ``app/data/run_metrics.py``), and for the Launch and Geometry pages torch with
the component registries. ``warm_up`` does all of that on a background thread as soon
as the server starts (``app/server.py``), cheapest and most-visited first, so the first
visitor finds it done. Failures are logged and never stop the server: the pages would
only do the same work themselves.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
import threading
import time
from collections.abc import Callable, Sequence

log = logging.getLogger("spherescope.app")

THREAD_NAME = "spherescope-warm-up"
_CONTEXT_LOGGER = "streamlit.runtime.scriptrunner_utils.script_run_context"
#: Scripts (run by Streamlit, not imported) and the server's own modules.
_NOT_IMPORTED = ("app.main", "app.server", "app.warmup", "app.views")


def app_modules() -> list[str]:
    """Every importable module of the ``app`` package (the pages' dependencies)."""
    import app

    names = [
        info.name
        for info in pkgutil.walk_packages(app.__path__, prefix="app.")
        if not info.name.startswith(_NOT_IMPORTED)
    ]
    return sorted(names)


def _import_modules() -> None:
    for name in app_modules():
        importlib.import_module(name)


def _read_runs_table() -> None:
    """The Runs table once: lists the newest runs (as the Runs page) from the run
    catalogue, and reads the last values of ended runs that did not store theirs."""
    from app import data
    from db.catalogue.query import runs_frame

    data.runs_table(runs_frame(data.store(), limit=data.RUNS_SHOWN)[0])


def _load_registries() -> None:
    """torch and the component registries (Launch form; Geometry's fixed heads)."""
    from app import data

    data.registries()


STEPS = (
    ("imports", _import_modules),
    ("runs table", _read_runs_table),
    ("registries", _load_registries),
)


def warm_up(steps: Sequence[tuple[str, Callable[[], None]]] = STEPS) -> dict[str, float]:
    """Run the steps in order; seconds per step (a failed step is logged and skipped)."""
    seconds = {}
    for name, step in steps:
        started = time.perf_counter()
        try:
            step()
        except Exception:  # warming is an optimisation: the page does it again if needed
            log.exception("dashboard warm-up: %s failed", name)
        seconds[name] = time.perf_counter() - started
    log.info(
        "dashboard warm-up done: %s",
        ", ".join(f"{name} {s:.2f} s" for name, s in seconds.items()),
    )
    return seconds


class _OwnThreadFilter(logging.Filter):
    """Drops Streamlit's "missing ScriptRunContext" warning for this thread: its caches
    are used here on purpose outside any session (and the log stays free of noise)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.threadName != THREAD_NAME


def start_warm_up() -> threading.Thread:
    """``warm_up`` on a daemon thread (the server answers meanwhile)."""
    logging.getLogger(_CONTEXT_LOGGER).addFilter(_OwnThreadFilter())
    thread = threading.Thread(target=warm_up, name=THREAD_NAME, daemon=True)
    thread.start()
    return thread
