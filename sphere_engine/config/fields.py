"""How a config field is declared (``option``) and how a value is checked against its
type hint and limits; ``sphere_engine.config`` builds its sections from these.

Standard library only: the dashboard and the launcher import it without torch.
"""

from __future__ import annotations

import copy
import math
import types
import typing
from dataclasses import field
from typing import Any, Literal

from sphere_engine.config.config_error import ConfigError


def option(default: Any, help: str, *, label: str = "", **constraints: Any) -> Any:
    """A dataclass field with help text, the label forms show (``label``; declared once
    here, so every form names the field the same way) and optional
    ``min``/``max``/``choices``."""
    metadata = {"help": help, "label": label, **constraints}
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: type(default)(default), metadata=metadata)
    return field(default=default, metadata=metadata)


def _type_name(annotation: Any) -> str:
    if typing.get_origin(annotation) is Literal:
        return " or ".join(repr(a) for a in typing.get_args(annotation))
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def check_finite(value: Any, field_name: str) -> None:
    """``ConfigError`` naming the field if ``value`` is or holds a NaN or an infinity
    (``<`` range checks pass NaN; the store's strict JSON has neither)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(field_name, f"{value!r} is not a finite number")
    if isinstance(value, dict):
        for key, item in value.items():
            check_finite(item, f"{field_name}.{key}")
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            check_finite(item, f"{field_name}[{index}]")


def coerce_value(value: Any, annotation: Any, field_name: str) -> Any:
    """Check ``value`` against ``annotation`` and return it (ints widen to floats).

    Raises ``ConfigError`` naming the field, the value and the expected type (or a NaN).
    """
    check_finite(value, field_name)
    if annotation is None or annotation is Any:
        return value
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    bad = ConfigError(field_name, f"{value!r} is not a valid {_type_name(annotation)}")
    if origin is Literal:
        if value not in args or isinstance(value, bool) != isinstance(args[0], bool):
            raise ConfigError(
                field_name,
                f"{value!r} is not allowed; choose one of " + ", ".join(repr(a) for a in args),
            )
        return value
    if origin in (typing.Union, types.UnionType):
        errors = []
        for arg in args:
            if arg is type(None):
                if value is None:
                    return None
                continue
            try:
                return coerce_value(value, arg, field_name)
            except ValueError as error:
                errors.append(error)
        raise bad
    if origin in (list, tuple):
        if not isinstance(value, (list, tuple)):
            raise bad
        item_type = args[0] if args else Any
        return [coerce_value(v, item_type, f"{field_name}[{i}]") for i, v in enumerate(value)]
    if origin is dict or annotation is dict:
        if not isinstance(value, dict):
            raise bad
        return copy.deepcopy(value)  # the config never shares nested lists with its input
    if annotation is bool:
        if not isinstance(value, bool):
            raise bad
        return value
    if annotation is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad
        return value
    if annotation is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad
        return float(value)
    if annotation is str:
        if not isinstance(value, str):
            raise bad
        return value
    return value


def check_range(value: Any, meta: dict[str, Any], field_name: str) -> None:
    if value is None:
        return
    if "choices" in meta and value not in meta["choices"]:
        raise ConfigError(
            field_name,
            f"{value!r} is not allowed; choose one of "
            + ", ".join(repr(c) for c in meta["choices"]),
        )
    if "min" in meta and value < meta["min"]:
        raise ConfigError(field_name, f"{value!r} is below the minimum {meta['min']!r}")
    if "max" in meta and value > meta["max"]:
        raise ConfigError(field_name, f"{value!r} is above the maximum {meta['max']!r}")
