"""Name → constructor registries (timm style).

A module registers a class or factory with ``@LOSSES.register("triplet")``; callers
build with ``create(name, **kwargs)`` and list with ``names()``. The UI's dropdowns and
form fields, the config validation and the tests' parametrisation all come from here,
so adding one file makes a new loss appear everywhere.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")

_MISSING = inspect.Parameter.empty


@dataclass(frozen=True)
class Param:
    """One keyword argument a registered constructor accepts."""

    name: str
    default: Any  # inspect.Parameter.empty when required
    annotation: Any  # the resolved type hint, or None
    help: str = ""

    @property
    def required(self) -> bool:
        return self.default is _MISSING


class Registry(Generic[T]):
    """A named collection of constructors of one kind (``loss``, ``head``, ...)."""

    def __init__(self, kind: str, fixed_args: tuple[str, ...] = ()) -> None:
        self.kind = kind
        # Positional arguments every constructor of this kind takes and that are not
        # user options (e.g. ``embedding_dim`` and ``num_classes`` for heads).
        self.fixed_args = fixed_args
        self._entries: dict[str, Callable[..., T]] = {}

    def register(self, name: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
        def decorator(constructor: Callable[..., T]) -> Callable[..., T]:
            if name in self._entries:
                raise ValueError(f"{self.kind} {name!r} is registered twice")
            self._entries[name] = constructor
            return constructor

        return decorator

    def names(self) -> list[str]:
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def get(self, name: str) -> Callable[..., T]:
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(self.names()) or "(none registered)"
            raise ValueError(f"unknown {self.kind} {name!r}; known: {known}") from None

    def params(self, name: str) -> dict[str, Param]:
        """The user-settable keyword arguments of ``name``, with defaults and types."""
        constructor = self.get(name)
        target = constructor.__init__ if inspect.isclass(constructor) else constructor
        signature = inspect.signature(target)
        try:
            hints = typing.get_type_hints(target)
        except Exception:  # unresolvable forward references: fall back to no types
            hints = {}
        helps = getattr(constructor, "param_help", {})
        result: dict[str, Param] = {}
        for parameter in signature.parameters.values():
            if parameter.name in ("self", *self.fixed_args):
                continue
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                continue
            result[parameter.name] = Param(
                parameter.name,
                parameter.default,
                hints.get(parameter.name),
                helps.get(parameter.name, ""),
            )
        return result

    def check_kwargs(self, name: str, kwargs: dict[str, Any], field: str) -> None:
        """Raise ``ValueError`` naming ``field`` for an unknown or missing option."""
        params = self.params(name)
        for key in kwargs:
            if key not in params:
                allowed = ", ".join(sorted(params)) or "none"
                raise ValueError(
                    f"{field}.{key}: unknown option {key!r} for {self.kind} {name!r}; "
                    f"allowed: {allowed}"
                )
        for param in params.values():
            if param.required and param.name not in kwargs:
                raise ValueError(f"{field}.{param.name}: required by {self.kind} {name!r}")

    def create(self, name: str, *args: Any, **kwargs: Any) -> T:
        constructor = self.get(name)
        self.check_kwargs(name, kwargs, field=self.kind)
        return constructor(*args, **kwargs)
