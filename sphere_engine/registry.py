"""Name → constructor registries (timm style), and the traits components declare.

Every kind of component (dataset, model, loss, head, regulariser) has one wrapper
module ``sphere_engine/<package>/registry.py`` of the same shape: the registry
(``DATASETS``, ``MODELS``, ``LOSSES``, ``HEADS``, ``REGULARIZERS``), ``create_x(name,
...)`` that builds through ``Registry.create`` and ``list_x()``. A module registers a
class with ``@LOSSES.register("triplet")``; the class declares its ``traits`` (what it
needs from the batch and the config) and its option help texts once. The launch form,
the config validation and the tests' parametrisation all ask the registry, so adding
one file makes a new component appear everywhere.

Torch-free: this module only knows names, signatures and traits.
"""

from __future__ import annotations

import difflib
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sphere_engine.config.config_error import ConfigError
from sphere_engine.config.option_checks import OptionError

T = TypeVar("T")

_MISSING = inspect.Parameter.empty


@dataclass(frozen=True)
class ComponentTraits:
    """What a component needs, declared once on its class as ``traits``."""

    #: Batches must be P×K with K ≥ 2, so every sample has a positive (pair losses).
    needs_positives: bool = False
    #: Labels are instance ids of two augmented views of each sample (NT-Xent).
    requires_views: bool = False
    #: The class weights are fixed buffers, never trained (polytope heads).
    is_fixed: bool = False
    #: The constructor uses the number of training classes (heads, centre loss).
    needs_num_classes: bool = False
    #: The constructor uses the embedding dimension d (backbones, heads, centre loss).
    needs_embedding_dim: bool = False


#: The traits of a component that declares none.
NO_TRAITS = ComponentTraits()


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
    """A named collection of constructors of one kind (``loss``, ``head``, ...).

    ``options_field`` is the config path the user options of this kind come from
    (``objective.options``); option errors of ``create`` are reported under it.
    ``fixed_args`` are the arguments every constructor of this kind takes that are not
    user options (``embedding_dim`` and ``num_classes`` for heads).
    """

    def __init__(self, kind: str, options_field: str, fixed_args: tuple[str, ...] = ()) -> None:
        self.kind = kind
        self.options_field = options_field
        self.fixed_args = fixed_args
        self._entries: dict[str, Callable[..., T]] = {}
        # "timm/" → a function making the constructor of "timm/<rest>" (None: no such name)
        self._families: dict[str, Callable[[str], Callable[..., T] | None]] = {}

    def register(self, name: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
        def decorator(constructor: Callable[..., T]) -> Callable[..., T]:
            if name in self._entries:
                raise ValueError(f"{self.kind} {name!r} is registered twice")
            traits = getattr(constructor, "traits", NO_TRAITS)
            if not isinstance(traits, ComponentTraits):
                raise TypeError(f"{self.kind} {name!r}: traits must be a ComponentTraits")
            self._entries[name] = constructor
            # the name is written once, in the decorator; the component reads it here
            constructor.registered_name = name  # type: ignore[attr-defined]
            return constructor

        return decorator

    def register_family(
        self, prefix: str, resolve: Callable[[str], Callable[..., T] | None]
    ) -> None:
        """Names ``<prefix><rest>`` are built by ``resolve(rest)`` (``timm/<model>``);
        ``resolve`` returns None for a ``rest`` it does not know, or raises a
        ``ValueError`` that says why."""
        self._families[prefix] = resolve

    def names(self) -> list[str]:
        return sorted(self._entries)

    def families(self) -> list[str]:
        """The prefixes of the name families (``timm/``), sorted."""
        return sorted(self._families)

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        try:
            self.get(name)
        except ValueError:
            return False
        return True

    def get(self, name: str) -> Callable[..., T]:
        if name in self._entries:
            return self._entries[name]
        for prefix, resolve in self._families.items():
            if isinstance(name, str) and name.startswith(prefix):
                constructor = resolve(name[len(prefix) :])
                if constructor is not None:
                    return constructor
        known = ", ".join(self.names() + [f"{p}<name>" for p in self.families()])
        close = difflib.get_close_matches(str(name), self.names(), n=3, cutoff=0.6)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        raise ValueError(
            f"unknown {self.kind} {name!r}; known: {known or '(none registered)'}{hint}"
        )

    def traits(self, name: str) -> ComponentTraits:
        """What ``name`` needs (P×K batches, two views, ...); unknown names raise."""
        return getattr(self.get(name), "traits", NO_TRAITS)

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

    def check_kwargs(self, name: str, kwargs: dict[str, Any], field: str | None = None) -> None:
        """Raise ``ConfigError`` naming ``field`` (default: ``options_field``) for an
        unknown or missing option."""
        field = field or self.options_field
        params = self.params(name)
        for key in kwargs:
            if key not in params:
                allowed = ", ".join(sorted(params)) or "none"
                raise ConfigError(
                    f"{field}.{key}",
                    f"unknown option {key!r} for {self.kind} {name!r}; allowed: {allowed}",
                )
        for param in params.values():
            if param.required and param.name not in kwargs:
                raise ConfigError(f"{field}.{param.name}", f"required by {self.kind} {name!r}")

    def create(self, name: str, *args: Any, **kwargs: Any) -> T:
        """Build ``name``: fixed arguments (positional or by keyword) plus user options.

        An option the component rejects is reported under ``options_field``
        (``objective.options.margin: -1 is out of range; must be >= 0``).
        """
        constructor = self.get(name)
        options = {k: v for k, v in kwargs.items() if k not in self.fixed_args}
        self.check_kwargs(name, options)
        try:
            return constructor(*args, **kwargs)
        except OptionError as error:
            if error.path in options:
                raise error.under(self.options_field) from None
            raise
