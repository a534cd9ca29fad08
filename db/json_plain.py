"""The one "JSON-plain" rule for everything SphereScope writes as JSON for people and
other programs (analysis metrics, ``train --json``, run info): standard JSON that any
strict parser reads.

NaN and ±inf become ``null`` (JSON has no token for them; Python's ``json.dumps``
would write the invalid ``NaN``); numpy scalars and arrays become numbers and lists;
tuples become lists; mapping keys become strings; anything else (paths, enums) its
``str``. Callers that must say why a value is missing write the reason beside it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


def json_plain(value: Any) -> Any:
    """``value`` as plain JSON data (module doc)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, Mapping):
        return {str(key): json_plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_plain(item) for item in value]
    if hasattr(value, "tolist"):  # numpy scalar or array
        return json_plain(value.tolist())
    return str(value)
