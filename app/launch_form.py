"""The launch form, built from ``RunConfig``'s fields and the component registries.

Every config field becomes a widget chosen from its type (``launch_fields``:
Literal/choices → select, bool → checkbox, int/float → number, lists and optional
values → text), labelled with the field's declared label and with its help text and
limits as the tooltip. The options of the chosen dataset, model, loss/head and
regulariser come from ``Registry.params``. Values are not clamped by the widgets:
``validated_config`` (schema, registries, data) is the one validator; its ``ConfigError``
carries the fields it concerns, and its message is shown under each of them and, above
the tabs, with the tabs to look at.

The form's values live in ``st.session_state[DRAFT]`` (a full config dict), so they
survive page switches, a failed validation and a rerun; "clone" and presets replace
the draft and bump a generation counter that gives every widget a fresh key. Each
widget owns its value once created; the last component chosen per kind and the options
set per component are remembered (``MEMORY``), so switching between a loss and a head
restores each side and never carries one component's options into another.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import typing
from typing import Any

import streamlit as st

from app import data
from app.launch_fields import (
    EMPTY,
    constraints_text,
    field_label,
    format_literal,
    humanise,
    value_widget,
)
from sphere_engine.config import ConfigError

DRAFT = "launch.draft"
GENERATION = "launch.generation"
MEMORY = "launch.memory"

SECTION_TITLES = {
    "data": "Data",
    "model": "Model",
    "objective": "Objective (loss or classifier head)",
    "regularizer": "Norm regulariser",
    "optimizer": "Optimiser",
    "schedule": "Learning-rate schedule",
    "training": "Training",
    "diagnostics": "Diagnostics",
    "evaluation": "Evaluation",
    "robustness": "Robustness",
}
EMPTY_FIELD = "enter a value (the field is empty)"
#: Sections whose ``name`` picks a registered component with options of its own.
COMPONENT_SECTIONS = ("data", "model", "objective", "regularizer")


# ----------------------------------------------------------------------------- draft state


def draft() -> dict[str, Any]:
    """The form's current values (a full config dict), created from the defaults."""
    if DRAFT not in st.session_state:
        st.session_state[DRAFT] = data.default_config()
    return st.session_state[DRAFT]


def load_into_form(config: dict[str, Any]) -> None:
    """Replace the form's values with ``config`` (partial configs merge onto defaults)."""
    merged = data.default_config()
    for section, values in (config or {}).items():
        if isinstance(values, dict) and section in merged:
            merged[section].update(copy.deepcopy(values))
    st.session_state[DRAFT] = merged
    st.session_state[MEMORY] = {}
    st.session_state[GENERATION] = st.session_state.get(GENERATION, 0) + 1


def _key(*parts: str) -> str:
    return f"lf{st.session_state.get(GENERATION, 0)}." + ".".join(parts)


def _memory() -> dict[str, Any]:
    """The last choice per component kind ("objective:loss" → name) and the options
    last set per component ("objective:loss:triplet" → {...}): switching the objective
    from a head back to a loss brings back that loss and its options, never the head's."""
    return st.session_state.setdefault(MEMORY, {})


# ----------------------------------------------------------------------------- errors


def error_tabs(error: ConfigError) -> list[str]:
    """The titles of the tabs holding the fields an error concerns, in order."""
    tabs: list[str] = []
    for field in error.paths:
        title = SECTION_TITLES.get(field.split(".", 1)[0])
        if title and title not in tabs:
            tabs.append(title)
    return tabs


def _slot(slots: dict[str, Any], field: str) -> None:
    """Reserve the place under a field where its validation message will go."""
    slots[field] = st.empty()


def _place_error(slots: dict[str, Any], error: ConfigError) -> list[str]:
    """Show ``error`` under every field it concerns (or the field's closest parent), so
    a rule between fields on two tabs shows on both; returns the fields it was shown at."""
    placed: list[str] = []
    for named in error.paths:
        field = named
        while field and field not in slots:
            field = field.rpartition(".")[0]
        if field and field not in placed:
            slots[field].error(str(error), icon=":material/block:")
            placed.append(field)
    return placed


# ----------------------------------------------------------------------------- the form


def render() -> tuple[dict[str, Any], ConfigError | None]:
    """Draw the form from the draft; return (the config it describes, its error).

    The error is the first problem of the current values (an emptied field, then
    ``validated_config``'s error); it is shown under every field it concerns and, above
    the tabs, with the names of the tabs to look at, in the same rerun.
    """
    from sphere_engine.config import SECTIONS

    config = copy.deepcopy(draft())
    slots: dict[str, Any] = {}
    missing: list[ConfigError] = []
    notice = st.empty()  # above the tabs: which tab holds the problem
    tabs = st.tabs([SECTION_TITLES[s] for s in SECTIONS])
    for tab, (section, cls) in zip(tabs, SECTIONS.items(), strict=True):
        with tab:
            config[section] = _render_section(section, cls, config[section], slots, missing)
            _slot(slots, section)
    error = missing[0] if missing else None
    # an emptied field keeps the draft's last value, so a page switch cannot lose it
    st.session_state[DRAFT] = config
    if error is None:
        error = validation_error(config)
    if error:
        _place_error(slots, error)
        notice.warning(
            f"Fix the config on tab {' and '.join(error_tabs(error)) or 'Data'}: {error}",
            icon=":material/arrow_downward:",
        )
    return config, error


def _render_section(
    section: str,
    cls: type,
    values: dict[str, Any],
    slots: dict[str, Any],
    missing: list[ConfigError],
) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    result = dict(values)
    fields = [f for f in dataclasses.fields(cls) if f.name != "options"]
    columns = st.columns(3)
    for index, fld in enumerate(fields):
        meta = dict(fld.metadata)
        help_text = meta.get("help", "") + constraints_text(meta)
        field_name = f"{section}.{fld.name}"
        with columns[index % 3]:
            if fld.name == "name" and section in COMPONENT_SECTIONS:
                result["name"] = _component_select(section, values, result, meta, help_text)
            else:
                chosen = value_widget(
                    field_label(meta, fld.name),
                    hints[fld.name],
                    values.get(fld.name),
                    key=_key(field_name),
                    help=help_text,
                    choices=meta.get("choices"),
                )
                if chosen is EMPTY:
                    missing.append(ConfigError(field_name, EMPTY_FIELD))
                else:
                    result[fld.name] = chosen
            _slot(slots, field_name)
    if section in COMPONENT_SECTIONS:
        result["options"] = _render_options(section, values, result, slots, missing)
    return result


def _registry_kind(section: str, values: dict[str, Any]) -> str:
    if section == "objective":
        return "head" if values.get("kind") == "head" else "loss"
    return section


def _component_select(
    section: str,
    before: dict[str, Any],
    values: dict[str, Any],
    meta: dict[str, Any],
    help_text: str,
) -> str:
    """The component's name; one widget (and one remembered choice) per kind, so a
    loss chosen before switching to a head comes back when switching back."""
    kind = _registry_kind(section, values)
    names = data.component_names(kind)
    memory = _memory()
    remembered = memory.get(f"{section}:{kind}")
    drafted = before.get("name") if _registry_kind(section, before) == kind else None
    default_name = data.default_config()[section]["name"]
    current = next(
        (n for n in (remembered, drafted, default_name) if n in names), names[0] if names else ""
    )
    label = {"loss": "Loss", "head": "Head"}.get(kind) if section == "objective" else None
    key = _key(section, "name", kind) if section == "objective" else _key(section, "name")
    # the widget's value of this rerun (the field may be drawn after the name)
    typed = st.session_state.get(_key(section, "embedding_dim"))
    dim = int(typed or values.get("embedding_dim") or before.get("embedding_dim") or 512)
    if section == "model":
        help_text += " (any timm model also works as timm/<name>, typed in the config)"
    chosen = value_widget(
        label or field_label(meta, "name"), str, current, key=key, help=help_text, choices=names
    )
    if section == "model":
        _backbone_sizes(chosen, names, dim)
    memory[f"{section}:{kind}"] = chosen
    return chosen


def _backbone_sizes(chosen: str, names: list[str], dim: int) -> None:
    """Every backbone's parameter count with this embedding, the chosen one in bold."""
    sizes = data.backbone_sizes(dim)
    listed = [
        f"**{name} {size}**" if name == chosen else f"{name} {size}"
        for name, size in sizes.items()
        if name in names
    ]
    if chosen not in sizes:  # timm/<name>: counted when it is built
        listed.append(f"**{chosen}**: counted at launch")
    st.caption(f"Parameters with a {dim}-d embedding: {' · '.join(listed)}")


def _render_options(
    section: str,
    before: dict[str, Any],
    values: dict[str, Any],
    slots: dict[str, Any],
    missing: list[ConfigError],
) -> dict[str, Any]:
    """The chosen component's options; only values that differ from the default are kept.

    The draft's options belong to the component the draft names; another component
    starts from its remembered options (or its defaults), never from those."""
    kind = _registry_kind(section, values)
    name = values.get("name", "")
    memory = _memory()
    owner = f"{section}:{kind}:{name}"
    same = _registry_kind(section, before) == kind and before.get("name") == name
    current = dict(before.get("options") or {}) if same else dict(memory.get(owner, {}))
    try:
        params = data.component_params(kind, name)
    except ValueError:
        params = {}
    if not params:
        return {key: value for key, value in current.items() if key in params}
    st.markdown(f"**Options of {kind} `{name}`**")
    options: dict[str, Any] = {}
    columns = st.columns(3)
    for index, (option, param) in enumerate(params.items()):
        required = param.required
        default = None if required else param.default
        value = current.get(option, default)
        if isinstance(value, tuple):
            value = list(value)
        annotation = param.annotation
        if isinstance(default, tuple):  # tuple[int, ...] defaults: edit as a list
            annotation = list[int] if all(isinstance(v, int) for v in default) else list
        shown_default = "required" if required else f"default {format_literal(default)!s}"
        help_text = f"{param.help or option} ({shown_default})"
        with columns[index % 3]:
            chosen = value_widget(
                humanise(option),
                annotation,
                value,
                key=_key(section, "options", kind, name, option),
                help=help_text,
            )
            _slot(slots, f"{section}.options.{option}")
        if chosen is EMPTY:
            missing.append(ConfigError(f"{section}.options.{option}", EMPTY_FIELD))
            chosen = value
        default_cmp = list(default) if isinstance(default, tuple) else default
        if required or chosen != default_cmp:
            options[option] = chosen
    _slot(slots, f"{section}.options")
    memory[owner] = options
    return options


def validation_error(config: dict[str, Any]) -> ConfigError | None:
    """``validated_config``'s error for ``config`` (schema, registries, data), or None."""
    return data.config_error(json.dumps(config, sort_keys=True))


def config_preview(config: dict[str, Any]) -> str:
    return json.dumps(config, indent=2, sort_keys=True)
