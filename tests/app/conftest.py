"""Fixtures for the dashboard's tests: private stores, fresh Streamlit caches.

``filled`` is a store with synthetic runs, written once per session (reading tests
share it); ``filled_fresh`` is a copy of its own for tests that change runs.
``sparse_loss`` (one 20,000-step run) and ``many_runs`` (300 ended runs) are stores
written once per session too, read-only.
``shared_stack`` is one `spherescope up` for the browser tests that open their own
runs by id (each start costs Redis, a worker, Streamlit and its first page loads).
``browser`` is the process's one Chromium (started once per xdist worker); each test
opens its pages in contexts of its own.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import streamlit as st
from app_fixtures import Filled, fill_store, sparse_loss_run
from dashboard_server import SharedChromium, shared_chromium, spherescope_up
from many_runs import MANY_RUNS, fill_many

from db.store import RunStore

if TYPE_CHECKING:
    from playwright.sync_api import Browser


@pytest.fixture(autouse=True)
def _fresh_caches():
    st.cache_data.clear()
    yield
    st.cache_data.clear()


@pytest.fixture
def home(tmp_path, monkeypatch):
    root = tmp_path / "home"
    monkeypatch.setenv("SPHERESCOPE_HOME", str(root))
    return root


@pytest.fixture
def store(home) -> RunStore:
    return RunStore(home)


@pytest.fixture(scope="session")
def _filled_template(tmp_path_factory) -> tuple[Path, Filled]:
    """``fill_store``'s store as it wrote it, which no test opens: ``filled`` and each
    ``filled_fresh`` are copies (recording the runs took 10 s on this 2-core machine at
    load 37, a copy of their ~60 small files a fraction of that)."""
    root = tmp_path_factory.mktemp("filled-template") / "home"
    return root, fill_store(RunStore(root))


@pytest.fixture(scope="session")
def _shared_filled(_filled_template, tmp_path_factory) -> tuple[str, Filled]:
    template, runs = _filled_template
    root = tmp_path_factory.mktemp("filled") / "home"
    shutil.copytree(template, root)
    return str(root), runs


@pytest.fixture
def filled(_shared_filled, monkeypatch) -> Filled:
    """Read-only: a store with synthetic runs shared by the session."""
    root, runs = _shared_filled
    monkeypatch.setenv("SPHERESCOPE_HOME", root)
    return runs


@pytest.fixture
def filled_fresh(store, _filled_template) -> Filled:
    """A store with synthetic runs of this test's own (for tests that change runs): a
    copy of the runs ``fill_store`` recorded once for the session, in ``store``."""
    template, runs = _filled_template
    shutil.copytree(template, store.home, dirs_exist_ok=True)
    return runs


@pytest.fixture(scope="session")
def _sparse_loss(tmp_path_factory) -> tuple[Path, str]:
    home = tmp_path_factory.mktemp("sparse") / "home"
    return home, sparse_loss_run(RunStore(home))


@pytest.fixture
def sparse_loss(_sparse_loss, monkeypatch) -> str:
    """Read-only: the id of a ``sparse_loss_run`` (20,000 steps) in a store of its own
    shared by the session, the test's SPHERESCOPE_HOME."""
    home, run_id = _sparse_loss
    monkeypatch.setenv("SPHERESCOPE_HOME", str(home))
    return run_id


@pytest.fixture(scope="session")
def _many_runs(tmp_path_factory) -> tuple[Path, list[str]]:
    home = tmp_path_factory.mktemp("many") / "home"
    return home, fill_many(home, MANY_RUNS)


@pytest.fixture
def many_runs(_many_runs, monkeypatch) -> tuple[Path, list[str]]:
    """Read-only: ``MANY_RUNS`` finished runs (``many_runs.fill_many``) shared by the
    session; (the store's home, their ids oldest first). The test's SPHERESCOPE_HOME."""
    home, run_ids = _many_runs
    monkeypatch.setenv("SPHERESCOPE_HOME", str(home))
    return home, run_ids


@pytest.fixture(scope="session")
def _chromium() -> Iterator[SharedChromium]:
    with shared_chromium() as chromium:
        yield chromium


@pytest.fixture
def browser(_chromium) -> Iterator[Browser]:
    """The process's headless Chromium; ``browser.new_page()`` opens a page in a context
    of its own, and every context the test opened is closed after it."""
    with _chromium.lend() as browser:
        yield browser


@pytest.fixture(scope="session")
def _stack_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("stack") / "home"


@pytest.fixture(scope="session")
def shared_stack(_stack_home) -> Iterator[str]:
    """`spherescope up` on ``stack_home``, shared by the session's browser tests that
    write runs of their own there and open them by id (none reads the runs list: the
    e2e walk, which starts from an empty store, has a stack of its own); yields the
    base URL."""
    with spherescope_up(_stack_home, "shared-stack.log") as base:
        yield base


@pytest.fixture
def stack_home(_stack_home) -> Path:
    """The store ``shared_stack`` reads."""
    return _stack_home
