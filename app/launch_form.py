"""The launch form, built from ``RunConfig``'s fields and the component registries.

Every config field becomes a widget chosen from its type (Literal/choices → select,
bool → checkbox, int/float → number, lists and optional values → text), with the
field's help text and limits as the tooltip. The options of the chosen dataset,
model, loss/head and regulariser come from ``Registry.params``. Values are not
clamped by the widgets: ``RunConfig.from_dict`` is the one validator, and its message
is shown next to the field it names.

The form's values live in ``st.session_state[DRAFT]`` (a full config dict), so they
survive page switches, a failed validation and a rerun; "clone" and presets replace
the draft and bump a generation counter that gives every widget a fresh key.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import tomllib
import types
import typing
from typing import Any, Literal

import streamlit as st

from app import data

DRAFT = "launch.draft"
GENERATION = "launch.generation"

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
    st.session_state[GENERATION] = st.session_state.get(GENERATION, 0) + 1


def _key(*parts: str) -> str:
    return f"lf{st.session_state.get(GENERATION, 0)}." + ".".join(parts)


# ----------------------------------------------------------------------------- values


def parse_literal(text: str) -> Any:
    """A TOML literal (number, bool, quoted string, list) or else the text itself."""
    text = text.strip()
    if not text:
        return None
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def format_literal(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return ", ".join(format_literal(v) for v in value)
    return repr(value) if isinstance(value, float) else str(value)


def parse_list(text: str) -> list[Any]:
    """ "100, 200" → [100, 200]; items parse as literals."""
    return [parse_literal(part) for part in text.split(",") if part.strip()]


def _constraints(meta: dict[str, Any]) -> str:
    parts = []
    if "min" in meta:
        parts.append(f"min {meta['min']}")
    if "max" in meta:
        parts.append(f"max {meta['max']}")
    return f" ({', '.join(parts)})" if parts else ""


def _float_step(value: Any) -> float:
    if isinstance(value, (int, float)) and value and math.isfinite(value):
        return float(10 ** math.floor(math.log10(abs(value))))
    return 0.1


def _base_type(annotation: Any) -> tuple[str, Any]:
    """Classify a type hint: ("literal", args), ("bool"|"int"|"float"|"str", None),
    ("optional", inner), ("list", item) or ("other", None)."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is Literal:
        return "literal", args
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1 and len(args) == 2:
            return "optional", inner[0]
        return "other", None
    if origin in (list, tuple):
        return "list", args[0] if args else Any
    for simple in (bool, int, float, str):
        if annotation is simple:
            return simple.__name__, None
    return "other", None


def value_widget(
    label: str,
    annotation: Any,
    value: Any,
    *,
    key: str,
    help: str,
    choices: typing.Sequence[Any] | None = None,
) -> Any:
    """One widget for a value of type ``annotation``; returns the parsed value."""
    kind, extra = _base_type(annotation)
    if choices is None and kind == "literal":
        choices = list(extra)
    if choices is not None:
        options = list(choices)
        if value not in options:
            options.append(value)
        return st.selectbox(label, options, index=options.index(value), key=key, help=help)
    if kind == "bool":
        return st.checkbox(label, value=bool(value), key=key, help=help)
    if kind == "int" and isinstance(value, int) and not isinstance(value, bool):
        return int(st.number_input(label, value=value, step=1, key=key, help=help))
    if kind == "float" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(
            st.number_input(
                label, value=float(value), step=_float_step(value), format="%g", key=key, help=help
            )
        )
    if kind == "list":
        text = st.text_input(
            label, value=format_literal(value or []), key=key, help=f"{help} — comma-separated"
        )
        return parse_list(text)
    if kind == "str":
        return st.text_input(label, value=value or "", key=key, help=help)
    # optional numbers, unions such as float | "auto", anything else: a TOML literal
    text = st.text_input(
        label,
        value=format_literal(value),
        key=key,
        help=f"{help} — a number, true/false, or text; empty = none",
    )
    return parse_literal(text)


def error_field(error: str) -> str:
    """The dotted field a validation message starts with ("data.batch_size: ...")."""
    return error.split(":", 1)[0].strip()


def _slot(slots: dict[str, Any], field: str) -> None:
    """Reserve the place under a field where its validation message will go."""
    slots[field] = st.empty()


def _place_error(slots: dict[str, Any], error: str) -> bool:
    """Show ``error`` under the field it names (or its closest parent); True if placed."""
    field = error_field(error)
    while field:
        if field in slots:
            slots[field].error(error, icon=":material/block:")
            return True
        field = field.rpartition(".")[0]
    return False


# ----------------------------------------------------------------------------- the form


def render() -> tuple[dict[str, Any], str | None]:
    """Draw the form from the draft; return (the config it describes, its error).

    The error is ``RunConfig.from_dict``'s message for the current values (None when
    valid); it is also shown under the field it names, in the same rerun.
    """
    from sphere_engine.config import SECTIONS

    config = copy.deepcopy(draft())
    slots: dict[str, Any] = {}
    tabs = st.tabs([SECTION_TITLES[s] for s in SECTIONS])
    for tab, (section, cls) in zip(tabs, SECTIONS.items(), strict=True):
        with tab:
            config[section] = _render_section(section, cls, config[section], slots)
            _slot(slots, section)
    st.session_state[DRAFT] = config
    error = validation_error(config)
    if error:
        _place_error(slots, error)
    return config, error


def _render_section(
    section: str, cls: type, values: dict[str, Any], slots: dict[str, Any]
) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    result = dict(values)
    fields = [f for f in dataclasses.fields(cls) if f.name != "options"]
    columns = st.columns(3)
    for index, fld in enumerate(fields):
        meta = dict(fld.metadata)
        help_text = meta.get("help", "") + _constraints(meta)
        field_name = f"{section}.{fld.name}"
        with columns[index % 3]:
            if fld.name == "name" and section in COMPONENT_SECTIONS:
                result["name"] = _component_select(section, result, help_text)
            else:
                result[fld.name] = value_widget(
                    fld.name,
                    hints[fld.name],
                    result.get(fld.name),
                    key=_key(field_name),
                    help=help_text,
                    choices=meta.get("choices"),
                )
            _slot(slots, field_name)
    if section in COMPONENT_SECTIONS:
        result["options"] = _render_options(section, result, slots)
    return result


def _registry_kind(section: str, values: dict[str, Any]) -> str:
    if section == "objective":
        return "head" if values.get("kind") == "head" else "loss"
    return section


def _component_select(section: str, values: dict[str, Any], help_text: str) -> str:
    kind = _registry_kind(section, values)
    names = data.component_names(kind)
    current = values.get("name")
    if current not in names:
        current = names[0] if names else ""
    label = {"objective": f"name ({kind})"}.get(section, "name")
    return st.selectbox(
        label,
        names,
        index=names.index(current) if current in names else 0,
        key=_key(section, "name", kind) if section == "objective" else _key(section, "name"),
        help=help_text,
    )


def _render_options(section: str, values: dict[str, Any], slots: dict[str, Any]) -> dict[str, Any]:
    """The chosen component's options; only values that differ from the default are kept."""
    kind = _registry_kind(section, values)
    name = values.get("name", "")
    current = dict(values.get("options") or {})
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
                option,
                annotation,
                value,
                key=_key(section, "options", kind, name, option),
                help=help_text,
            )
            _slot(slots, f"{section}.options.{option}")
        default_cmp = list(default) if isinstance(default, tuple) else default
        if required or chosen != default_cmp:
            options[option] = chosen
    _slot(slots, f"{section}.options")
    return options


def validation_error(config: dict[str, Any]) -> str | None:
    """``RunConfig.from_dict``'s message for ``config``, or None when it is valid."""
    try:
        data.validate_config(config)
    except ValueError as error:
        return str(error)
    return None


def config_preview(config: dict[str, Any]) -> str:
    return json.dumps(config, indent=2, sort_keys=True)
