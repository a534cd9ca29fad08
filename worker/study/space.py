"""A study arm's search space: one distribution per config path, checked against the
run config's fields before anything is queued, and turned into Optuna distributions.

A path names a field of ``RunConfig`` (``optimizer.lr``) or a key inside one of its
option tables (``objective.options.margin``); the values a distribution can take are
checked by building the arm's config at each end of the range (or at each choice) with
``validated_config``, the one check of a run, so a component's own option limits apply.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from sphere_engine.config import SECTIONS, ConfigError
from sphere_engine.config.fields import check_range, coerce_value

Kind = Literal["float", "log_float", "int", "categorical"]
KINDS: tuple[str, ...] = typing.get_args(Kind)


@dataclass(frozen=True)
class Dimension:
    """One searched config path: ``kind`` over [low, high] (``step`` for int), or one
    of ``choices``."""

    path: str
    kind: Kind
    low: float | int | None = None
    high: float | int | None = None
    step: int = 1
    choices: tuple[Any, ...] = ()

    def extremes(self) -> list[Any]:
        """The values whose configs are checked: both ends of a range, every choice."""
        return list(self.choices) if self.kind == "categorical" else [self.low, self.high]

    def optuna_distribution(self) -> Any:
        from optuna.distributions import (
            CategoricalDistribution,
            FloatDistribution,
            IntDistribution,
        )

        if self.kind == "categorical":
            return CategoricalDistribution(list(self.choices))
        if self.kind == "int":
            return IntDistribution(int(self.low), int(self.high), step=self.step)
        return FloatDistribution(float(self.low), float(self.high), log=self.kind == "log_float")

    def suggest(self, trial: Any) -> Any:
        """Draw this dimension's value for an Optuna trial (recorded under ``path``)."""
        if self.kind == "categorical":
            return trial.suggest_categorical(self.path, list(self.choices))
        if self.kind == "int":
            return trial.suggest_int(self.path, int(self.low), int(self.high), step=self.step)
        return trial.suggest_float(
            self.path, float(self.low), float(self.high), log=self.kind == "log_float"
        )

    def grid_values(self, where: str) -> list[Any]:
        """The values the grid sampler tries (categorical and int dimensions only)."""
        if self.kind == "categorical":
            return list(self.choices)
        if self.kind == "int":
            return list(range(int(self.low), int(self.high) + 1, self.step))
        raise ConfigError(where, f"a {self.kind} range has no grid; use categorical values")

    def to_dict(self) -> dict[str, Any]:
        if self.kind == "categorical":
            return {"type": "categorical", "choices": list(self.choices)}
        out = {"type": self.kind, "low": self.low, "high": self.high}
        return {**out, "step": self.step} if self.kind == "int" else out


def _number(value: Any, where: str, integer: bool) -> float | int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(where, f"{value!r} is not a number")
    if integer and not isinstance(value, int):
        raise ConfigError(where, f"{value!r} is not an integer")
    if not math.isfinite(value):
        raise ConfigError(where, f"{value!r} is not a finite number")
    return value


def parse_dimension(path: str, table: Any, where: str) -> Dimension:
    """``{type = "log_float", low = 1e-4, high = 1e-1}`` (or ``choices = [...]`` for
    categorical) → a ``Dimension``; ``ConfigError`` at ``where`` otherwise."""
    if not isinstance(table, Mapping):
        raise ConfigError(
            where, f"expected a table with type and low/high or choices, got {table!r}"
        )
    kind = table.get("type")
    if kind not in KINDS:
        raise ConfigError(f"{where}.type", f"{kind!r} is not one of {', '.join(KINDS)}")
    allowed = {"type", "choices"} if kind == "categorical" else {"type", "low", "high"}
    allowed |= {"step"} if kind == "int" else set()
    for key in table:
        if key not in allowed:
            raise ConfigError(
                f"{where}.{key}",
                f"unknown key for a {kind} dimension; allowed: {', '.join(sorted(allowed))}",
            )
    if kind == "categorical":
        choices = table.get("choices")
        if not isinstance(choices, list) or not choices:
            raise ConfigError(f"{where}.choices", "expected a non-empty list of values")
        if len({repr(c) for c in choices}) < len(choices):
            raise ConfigError(f"{where}.choices", f"{choices!r} repeats a value")
        for choice in choices:
            if not isinstance(choice, (str, int, float, bool)) and choice is not None:
                raise ConfigError(
                    f"{where}.choices", f"{choice!r}: choices must be strings, numbers or booleans"
                )
        return Dimension(path, kind, choices=tuple(choices))
    integer = kind == "int"
    for key in ("low", "high"):
        if key not in table:
            raise ConfigError(f"{where}.{key}", "missing")
    low = _number(table["low"], f"{where}.low", integer)
    high = _number(table["high"], f"{where}.high", integer)
    if not low < high:
        raise ConfigError(f"{where}.high", f"{high!r} must be above low {low!r}")
    if kind == "log_float" and low <= 0:
        raise ConfigError(f"{where}.low", f"{low!r}: a log_float range must start above 0")
    step = table.get("step", 1)
    if integer:
        step = int(_number(step, f"{where}.step", True))
        if step < 1:
            raise ConfigError(f"{where}.step", f"{step} must be at least 1")
    return Dimension(path, kind, low, high, step)


def _field(path: str, where: str) -> tuple[Any, dict[str, Any]] | None:
    """(type hint, metadata) of a config field; None for a key inside an option table
    (``objective.options.margin``), whose checks are the component's own."""
    parts = path.split(".")
    if len(parts) < 2 or parts[0] not in SECTIONS:
        raise ConfigError(
            where,
            f"{path!r} is not a config field (section.setting, sections: {', '.join(SECTIONS)})",
        )
    section = SECTIONS[parts[0]]
    fields = {f.name: f for f in dataclasses.fields(section)}
    if parts[1] not in fields:
        raise ConfigError(
            where, f"{path!r} is not a config field; {parts[0]} has: {', '.join(sorted(fields))}"
        )
    hint = typing.get_type_hints(section)[parts[1]]
    is_table = hint is dict or typing.get_origin(hint) is dict
    if len(parts) > 2:
        if not is_table:
            raise ConfigError(where, f"{'.'.join(parts[:2])!r} is not a table of options")
        return None
    if is_table:
        raise ConfigError(where, f"{path!r} is a table; search one of its keys ({path}.NAME)")
    return hint, dict(fields[parts[1]].metadata)


def check_dimension_type(dimension: Dimension, where: str) -> None:
    """A distribution's values fit the field's type and limits (for a field of
    ``RunConfig``; option-table keys are checked by building the configs)."""
    found = _field(dimension.path, where)
    if found is None:
        return
    hint, meta = found
    union = typing.get_origin(hint) in (typing.Union, types.UnionType)
    base = [a for a in typing.get_args(hint) if a is not type(None)] if union else [hint]
    type_name = getattr(hint, "__name__", str(hint))
    if dimension.kind in ("float", "log_float") and float not in base:
        raise ConfigError(
            where,
            f"a {dimension.kind} range on {dimension.path!r}, which is a {type_name} field",
        )
    if dimension.kind == "int" and not ({int, float} & set(base)):
        raise ConfigError(
            where,
            f"an int range on {dimension.path!r}, which is a {type_name} field",
        )
    for value in dimension.extremes():
        try:
            check_range(coerce_value(value, hint, dimension.path), meta, dimension.path)
        except ConfigError as error:
            raise ConfigError(where, error.detail) from None


def set_path_value(config: dict[str, Any], path: str, value: Any) -> None:
    """``config`` (a run-config dict) with ``path`` set to ``value`` (in place)."""
    from sphere_engine.config import set_path

    set_path(config, path.split("."), value, path)
