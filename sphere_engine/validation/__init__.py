"""Checks of a run config against the components it names, one layer above
``components.py``: ``validated_config`` / ``validate`` (registry names, options, the
dataset), the registry each config section names a component of (``registry_for``,
``name_choices``) and ``resolved_data_options`` (``data.image_size`` against the backbone).

Cheap to import: torch and the registries load on the first call. ``sphere_engine.config``
below it holds the plain declarations.
"""

from sphere_engine.validation.config_checks import validate, validated_config
from sphere_engine.validation.image_size import resolved_data_options
from sphere_engine.validation.registries import (
    NONE,
    OPTIONAL_KINDS,
    component_kind,
    component_registries,
    name_choices,
    registry_for,
)

__all__ = [
    "NONE",
    "OPTIONAL_KINDS",
    "component_kind",
    "component_registries",
    "name_choices",
    "registry_for",
    "resolved_data_options",
    "validate",
    "validated_config",
]
