"""Which registry each kind of component is looked up in, for the Launch form and
validation alike, and the one rule for an optional component (``none`` first).

Cheap to import: the registries (and with them torch) load on the first call, so the
dashboard pays for torch only when the Launch form asks for the components.
"""

from __future__ import annotations

from typing import Any

from sphere_engine.registry import Registry

#: The name that leaves an optional component out.
NONE = "none"
#: Kinds whose component may be left out (``regularizer.name = "none"``).
OPTIONAL_KINDS = ("regularizer",)


def component_registries() -> dict[str, Registry[Any]]:
    """kind (data, model, head, loss, regularizer) → its registry."""
    from sphere_engine.data import DATASETS
    from sphere_engine.heads import HEADS
    from sphere_engine.losses import LOSSES
    from sphere_engine.models import MODELS
    from sphere_engine.regularizers import REGULARIZERS

    return {
        "data": DATASETS,
        "model": MODELS,
        "head": HEADS,
        "loss": LOSSES,
        "regularizer": REGULARIZERS,
    }


def component_kind(section: str, objective_kind: str = "loss") -> str:
    """The kind of component a config section names (``objective`` by its kind)."""
    return objective_kind if section == "objective" else section


def registry_for(section: str, objective_kind: str = "loss") -> Registry[Any]:
    """The registry a config section's ``name`` is looked up in (``objective`` by kind)."""
    registries = component_registries()
    kind = component_kind(section, objective_kind)
    if kind not in registries:
        sections = ["data", "model", "objective", "regularizer"]
        raise ValueError(f"{section}: has no registry; choose one of {', '.join(sections)}")
    return registries[kind]


def name_choices(section: str, objective_kind: str = "loss") -> list[str]:
    """The names ``<section>.name`` accepts, from the registry, ``none`` first for an
    optional component. Dropdowns and help texts use this, never a hard-coded list."""
    names = registry_for(section, objective_kind).names()
    return [NONE, *names] if component_kind(section, objective_kind) in OPTIONAL_KINDS else names
