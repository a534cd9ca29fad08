"""Fixtures for the dashboard's tests: a private store per test, fresh Streamlit caches."""

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


@pytest.fixture
def filled(store) -> Filled:
    return fill_store(store)
