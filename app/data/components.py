"""What the launch form asks the engine: registered components, their options, checks.

These load torch (the registries), once per process, and only when the Launch page
needs them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import streamlit as st

if TYPE_CHECKING:
    from sphere_engine.registry import Param, Registry


@st.cache_resource(show_spinner="Loading the component registries…")
def registries() -> dict[str, Registry[Any]]:
    """The registries the launch form is built from (imports torch once per process)."""
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


def component_names(kind: str) -> list[str]:
    """Registered names of one kind (data, model, head, loss, regularizer)."""
    names = registries()[kind].names()
    return ["none", *names] if kind == "regularizer" else names


def component_params(kind: str, name: str) -> dict[str, Param]:
    """name's options: {option: Param(default, annotation, help)}; {} for "none"."""
    if kind == "regularizer" and name == "none":
        return {}
    return registries()[kind].params(name)


def validate_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Validate as ``worker.launch`` does: schema, then registries and data (raises
    ValueError naming the field)."""
    from sphere_engine.config import RunConfig
    from sphere_engine.validation import validate

    run_config = RunConfig.from_dict(dict(config))
    validate(run_config)
    return run_config.to_dict()


def default_config() -> dict[str, Any]:
    from sphere_engine.config import RunConfig

    return RunConfig().to_dict()
