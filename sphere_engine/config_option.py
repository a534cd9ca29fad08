"""``option``: a config dataclass field with its help text and constraints.

Its own module so that config sections defined outside ``config.py``
(``config_evaluation.py``) use it without an import cycle.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any


def option(default: Any, help: str, **constraints: Any) -> Any:
    """A dataclass field with help text and optional ``min``/``max``/``choices``."""
    metadata = {"help": help, **constraints}
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: type(default)(default), metadata=metadata)
    return field(default=default, metadata=metadata)
