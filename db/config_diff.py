"""Which configuration keys differ between runs (dotted keys, one column per run)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pandas as pd

_MISSING = object()


def flatten(config: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}}`` → ``{"a.b": 1}``; lists and empty dicts are leaves."""
    flat: dict[str, Any] = {}
    for key, value in config.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(flatten(value, dotted + "."))
        else:
            flat[dotted] = value
    return flat


def _display(value: Any) -> str | None:
    """Strings as they are, other values as JSON (one column type for display);
    ``None`` where the run has no such key."""
    if value is _MISSING:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)


def diff_configs(configs: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """Rows: dotted keys whose values differ between the runs (sorted), a ``key``
    column then one column per run id holding the value as text (``None``: absent)."""
    flat = {run_id: flatten(config) for run_id, config in configs.items()}
    keys = sorted({key for values in flat.values() for key in values})
    rows = []
    for key in keys:
        values = [values_.get(key, _MISSING) for values_ in flat.values()]
        canonical = {
            "\0missing" if v is _MISSING else json.dumps(v, sort_keys=True) for v in values
        }
        if len(canonical) > 1:
            rows.append([key, *(_display(v) for v in values)])
    return pd.DataFrame(rows, columns=["key", *flat], dtype=object)
