"""The store of the configured home and the one caching helper every read goes through.

A read is a plain function taking the ``RunStore`` first; ``@store_read(ttl)`` turns
it into a function without that argument whose results are cached with
``st.cache_data`` per home (``SPHERESCOPE_HOME``) and arguments. TTLs are short for
what changes while runs train and long for what never changes (snapshots).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Concatenate, Generic, ParamSpec, TypeVar

import streamlit as st

from app.quiet_logs import quiet

if TYPE_CHECKING:
    from db.store import RunStore

LIVE_TTL = 1.0  # seconds; what a live page's charts poll (every second) may be this old
LIST_TTL = 2.0
#: What a live page re-reads but rarely changes (metric names, evaluations): every few
#: refreshes, not every one (watching must be cheap).
SLOW_LIVE_TTL = 5.0
STATIC_TTL = 300.0

quiet()  # before any cached read runs outside a Streamlit runtime

P = ParamSpec("P")
R = TypeVar("R")


def home() -> str:
    """The store's root folder as configured (``SPHERESCOPE_HOME``; "" = the default)."""
    return os.environ.get("SPHERESCOPE_HOME", "")


@st.cache_resource(show_spinner=False)
def _store(root: str) -> RunStore:
    from db.store import RunStore

    return RunStore(root or None)


def store() -> RunStore:
    """The ``RunStore`` for the configured home (one per process and home)."""
    return _store(home())


class StoreRead(Generic[P, R]):
    """A read over the configured store, cached per (home, arguments); ``clear()``
    forgets every cached result (after an action changed the runs)."""

    def __init__(
        self, read: Callable[Concatenate[RunStore, P], R], ttl: float, max_entries: int | None
    ) -> None:
        def cached(root: str, *args: P.args, **kwargs: P.kwargs) -> R:
            return read(_store(root), *args, **kwargs)

        # Streamlit keys a cache by module, qualified name and source; every ``cached``
        # shares this source, so it must carry the read's own name to get its own cache.
        cached.__module__, cached.__qualname__ = read.__module__, read.__qualname__
        self._cached = st.cache_data(ttl=ttl, show_spinner=False, max_entries=max_entries)(cached)
        functools.update_wrapper(self, read)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self._cached(home(), *args, **kwargs)

    def clear(self) -> None:
        self._cached.clear()


def store_read(
    ttl: float, *, max_entries: int | None = None
) -> Callable[[Callable[Concatenate[RunStore, P], R]], StoreRead[P, R]]:
    """Decorator: cache a ``read(store, ...)`` for ``ttl`` seconds (see ``StoreRead``)."""

    def decorate(read: Callable[Concatenate[RunStore, P], R]) -> StoreRead[P, R]:
        return StoreRead(read, ttl, max_entries)

    return decorate
