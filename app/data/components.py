"""What the launch form asks the engine: registered components, their options, checks.

These load torch (the registries), once per process, and only when the Launch page
needs them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import streamlit as st

from sphere_engine.config import ConfigError
from sphere_engine.validation.registries import (
    NONE,
    OPTIONAL_KINDS,
    component_registries,
    name_choices,
)

if TYPE_CHECKING:
    from sphere_engine.registry import Param, Registry


@st.cache_resource(show_spinner="Loading the component registries…")
def registries() -> dict[str, Registry[Any]]:
    """The registries the launch form is built from (imports torch once per process):
    the same map validation looks names up in."""
    return component_registries()


def component_names(kind: str) -> list[str]:
    """Registered names of one kind (data, model, head, loss, regularizer), ``none``
    first for an optional one (validation's rule)."""
    registries()  # torch loads once, behind the spinner
    return name_choices(kind)


def backbone_sizes(embedding_dim: int) -> dict[str, str]:
    """``{"resnet50": "24.6 M", ...}``: every backbone with a declared size and its
    parameters with an ``embedding_dim`` embedding (torch-free declarations, checked
    against the built models by the engine's tests)."""
    from sphere_engine.catalogue.backbones import (
        BACKBONE_SIZES,
        backbone_parameters,
        format_parameters,
    )

    sizes = {}
    for name in BACKBONE_SIZES:
        count = backbone_parameters(name, embedding_dim)
        if count is not None:
            sizes[name] = format_parameters(count)
    return sizes


def component_params(kind: str, name: str) -> dict[str, Param]:
    """name's options: {option: Param(default, annotation, help)}; {} for "none"."""
    if kind in OPTIONAL_KINDS and name == NONE:
        return {}
    return registries()[kind].params(name)


@st.cache_data(ttl=5, max_entries=256, show_spinner=False)
def config_error(config_json: str) -> ConfigError | None:
    """The error ``worker.launch`` would refuse a config given as JSON with (the same
    ``validated_config``), or None when it is valid. Cached briefly (every rerun of the
    form asks; ``data.root`` may change)."""
    from sphere_engine.validation import validated_config

    try:
        validated_config(json.loads(config_json))
    except ConfigError as error:
        return error
    except ValueError as error:  # not about one field: shown above the tabs
        return ConfigError("run config", str(error))
    return None


def sweep_error(
    config: Mapping[str, Any], grid: Mapping[str, list[Any]], seeds: list[int]
) -> str | None:
    """The first invalid combination of a sweep, as ``worker.launch_sweep`` would
    refuse it (``"sweep combination optimizer.lr=-1: optimizer.lr: ..."``), or None."""
    import worker

    try:
        worker.check_sweep(dict(config), dict(grid), list(seeds))
    except ValueError as error:
        return str(error)
    return None


def default_config() -> dict[str, Any]:
    from sphere_engine.config import RunConfig

    return RunConfig().to_dict()
