"""Streamlit's "No runtime found, using MemoryCacheStorageManager" warning, dropped.

Every process that calls a cached read outside ``streamlit run`` (the CLI, the worker,
the SDK's helpers, tests) logs it once per cached function, and it says nothing a user
can act on: the memory cache it falls back to is the one those processes want.
"""

from __future__ import annotations

import logging

CACHE_LOGGERS = (
    "streamlit.runtime.caching.cache_data_api",
    "streamlit.runtime.caching.cache_resource_api",
)
NO_RUNTIME = "No runtime found"


class _DropNoRuntime(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return NO_RUNTIME not in record.getMessage()


def quiet() -> None:
    """Install the filter (a filter, not a level: Streamlit resets its loggers' levels
    when it reads its config)."""
    for name in CACHE_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, _DropNoRuntime) for f in logger.filters):
            logger.addFilter(_DropNoRuntime())
