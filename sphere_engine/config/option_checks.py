"""The one check for component options, with the one message format.

Every loss, head, regulariser, backbone and dataset checks its options with
``check_option`` (numbers and integers) or ``check_choice``. A bad value raises
``OptionError`` whose text is ``<path>: <value> is out of range; must be <rule>``. The
component names only its own option (``margin``); the registry that builds it prefixes
the config path the options came from, so a launch reports
``objective.options.margin: -1 is out of range; must be >= 0``.

Torch-free, so it can be imported anywhere.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from sphere_engine.config.config_error import ConfigError


class OptionError(ConfigError):
    """A component option outside its allowed values (a ``ConfigError``)."""

    def __init__(self, path: str, value: Any, requirement: str) -> None:
        self.value = value
        self.requirement = requirement
        super().__init__(path, f"{value!r} is out of range; must be {requirement}")

    def __reduce__(self) -> tuple[object, ...]:
        return (OptionError, (self.path, self.value, self.requirement))

    @property
    def option(self) -> str:
        """The option's own name (the last part of the path)."""
        return self.path.rsplit(".", 1)[-1]

    def under(self, prefix: str) -> OptionError:
        """The same error with ``prefix`` (e.g. ``objective.options``) before the path."""
        return OptionError(f"{prefix}.{self.path}", self.value, self.requirement)


def _number_text(value: float) -> str:
    if math.isclose(value, math.pi):
        return "π"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _rule(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    if low is not None and high is not None:
        left, right = "(" if low_open else "[", ")" if high_open else "]"
        return f"in {left}{_number_text(low)}, {_number_text(high)}{right}"
    if low is not None:
        return f"{'>' if low_open else '>='} {_number_text(low)}"
    if high is not None:
        return f"{'<' if high_open else '<='} {_number_text(high)}"
    return "a finite number"


def check_option(
    name: str,
    value: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    integer: bool = False,
) -> Any:
    """Return ``value`` (an int when ``integer``, else a float) if it is a finite number
    within the bounds; ``low_open``/``high_open`` exclude the bound itself."""
    rule = _rule(low, high, low_open, high_open)
    if integer:
        rule = f"an integer {rule}" if rule != "a finite number" else "an integer"
        if isinstance(value, bool) or not isinstance(value, int):
            raise OptionError(name, value, rule)
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise OptionError(name, value, rule)
    if not math.isfinite(value):
        raise OptionError(name, value, rule)
    too_low = low is not None and (value <= low if low_open else value < low)
    too_high = high is not None and (value >= high if high_open else value > high)
    if too_low or too_high:
        raise OptionError(name, value, rule)
    return value if integer else float(value)


def check_choice(name: str, value: Any, choices: Iterable[Any]) -> Any:
    """Return ``value`` if it is one of ``choices``."""
    allowed = list(choices)
    if value not in allowed or isinstance(value, bool) != isinstance(allowed[0], bool):
        raise OptionError(name, value, "one of " + ", ".join(repr(c) for c in allowed))
    return value
