"""Checks of head options, raising ``ValueError`` that names the option and what is allowed."""

from __future__ import annotations

import math
from typing import Any


def check_int_at_least(name: str, value: Any, minimum: int) -> int:
    """Return ``value`` if it is an integer ≥ ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name}={value!r} is invalid; allowed: an integer >= {minimum}")
    return value


def check_positive(name: str, value: Any) -> float:
    """Return ``value`` as a float if it is a finite number > 0."""
    if not _is_number(value) or not value > 0 or not math.isfinite(value):
        raise ValueError(f"{name}={value!r} is invalid; allowed: a finite number > 0")
    return float(value)


def check_non_negative(name: str, value: Any) -> float:
    """Return ``value`` as a float if it is a finite number ≥ 0."""
    if not _is_number(value) or not value >= 0 or not math.isfinite(value):
        raise ValueError(f"{name}={value!r} is invalid; allowed: a finite number >= 0")
    return float(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
