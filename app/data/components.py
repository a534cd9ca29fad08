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
from sphere_engine.config.registries import (
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


@st.cache_data(show_spinner=False)
def backbone_size(name: str, embedding_dim: int) -> str:
    """``"24.6 M parameters"`` for backbone ``name`` (counted on the meta device, no
    weights allocated), or "" when it cannot be counted without more options."""
    from sphere_engine.models.parameter_counts import parameter_count

    try:
        count = parameter_count(name, embedding_dim)
    except ValueError:
        return ""
    return "" if count is None else f"{count / 1e6:.1f} M parameters"


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
    from sphere_engine.config.validation import validated_config

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
