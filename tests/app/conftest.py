"""Fixtures for the dashboard's tests: private stores, fresh Streamlit caches.

``filled`` is a store with synthetic runs, written once per session (reading tests
share it); ``filled_fresh`` writes a new one for tests that change runs.
"""

from __future__ import annotations

import pytest
import streamlit as st
from app_fixtures import Filled, fill_store

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
