"""The launch form's value widgets: one widget per value type, labels, literal parsing.

A widget's value lives in its own session-state key, set once from the form's draft
when the key is new and never passed again as ``value=``: Streamlit then has one
source of truth per field, so a cleared or rejected entry cannot bring back an older
value. An emptied number is ``None`` and reported as missing (``EMPTY``), not replaced.
"""

from __future__ import annotations

import math
import tomllib
import types
import typing
from typing import Any, Literal

import streamlit as st

#: What an emptied required field returns: the form reports it, validation never sees it.
EMPTY = object()


def humanise(name: str) -> str:
    """``samples_per_class`` → "Samples per class" (for options without a declared label)."""
    text = name.replace("_", " ").strip()
    return text[:1].upper() + text[1:]


def field_label(meta: dict[str, Any], name: str) -> str:
    """The label a config field declares (``option(..., label=...)``), else its name made
    readable."""
    return str(meta.get("label") or humanise(name))


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


def constraints_text(meta: dict[str, Any]) -> str:
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


def base_type(annotation: Any) -> tuple[str, Any]:
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


def _initial(key: str, value: Any) -> None:
    """Seed a widget's state from the draft once; afterwards the widget owns it."""
    if key not in st.session_state:
        st.session_state[key] = value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def value_widget(
    label: str,
    annotation: Any,
    value: Any,
    *,
    key: str,
    help: str,
    choices: typing.Sequence[Any] | None = None,
) -> Any:
    """One widget for a value of type ``annotation``; returns the parsed value, or
    ``EMPTY`` for a required number the user cleared."""
    kind, extra = base_type(annotation)
    if choices is None and kind == "literal":
        choices = list(extra)
    if choices is not None:
        options = list(choices)
        if value not in options:
            options.append(value)
        _initial(key, value)
        if st.session_state[key] not in options:
            st.session_state[key] = value
        return st.selectbox(label, options, key=key, help=help)
    if kind == "bool":
        _initial(key, bool(value))
        return st.checkbox(label, key=key, help=help)
    if kind == "int" and (_is_number(value) or value is None):
        _initial(key, None if value is None else int(value))
        number = st.number_input(
            label, value=None, step=1, key=key, help=help, placeholder="a whole number"
        )
        return EMPTY if number is None else int(number)
    if kind == "float" and (_is_number(value) or value is None):
        _initial(key, None if value is None else float(value))
        number = st.number_input(
            label,
            value=None,
            step=_float_step(value),
            format="%g",
            key=key,
            help=help,
            placeholder="a number",
        )
        return EMPTY if number is None else float(number)
    if kind == "list":
        _initial(key, format_literal(value or []))
        return parse_list(st.text_input(label, key=key, help=f"{help} — comma-separated"))
    if kind == "str":
        _initial(key, value or "")
        return st.text_input(label, key=key, help=help)
    # optional numbers, unions such as float | "auto", anything else: a TOML literal
    _initial(key, format_literal(value))
    text = st.text_input(
        label, key=key, help=f"{help} — a number, true/false, or text; empty = none"
    )
    return parse_literal(text)
