"""Fixtures for the dashboard's tests: private stores, fresh Streamlit caches.

``filled`` is a store with synthetic runs, written once per session (reading tests
share it); ``filled_fresh`` writes a new one for tests that change runs.
``shared_stack`` is one `spherescope up` for the browser tests that open their own
runs by id (each start costs Redis, a worker, Streamlit and its first page loads).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
from app_fixtures import Filled, fill_store
from dashboard_server import spherescope_up

from db.store import RunStore


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
def _shared_filled(tmp_path_factory) -> tuple[str, Filled]:
    root = tmp_path_factory.mktemp("filled") / "home"
    return str(root), fill_store(RunStore(root))


@pytest.fixture
def filled(_shared_filled, monkeypatch) -> Filled:
    """Read-only: a store with synthetic runs shared by the session."""
    root, runs = _shared_filled
    monkeypatch.setenv("SPHERESCOPE_HOME", root)
    return runs


@pytest.fixture
def filled_fresh(store) -> Filled:
    """A store with synthetic runs of this test's own (for tests that change runs)."""
    return fill_store(store)


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
