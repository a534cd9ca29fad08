"""Checks for hyperparameters: a ``ValueError`` naming the option, value and range."""

from __future__ import annotations


def require_positive(field: str, value: float) -> None:
    """Raise unless ``value > 0``."""
    if not value > 0:
        raise ValueError(f"{field}: {value!r} is not allowed; it must be > 0")


def require_non_negative(field: str, value: float) -> None:
    """Raise unless ``value >= 0``."""
    if not value >= 0:
        raise ValueError(f"{field}: {value!r} is not allowed; it must be >= 0")


def require_range(field: str, value: float, low: float, high: float) -> None:
    """Raise unless ``low <= value <= high``."""
    if not low <= value <= high:
        raise ValueError(f"{field}: {value!r} is not allowed; it must be in [{low}, {high}]")
