"""``section.key=value`` overrides of a config table (the CLI's ``--set``, reproduce
entries)."""

from __future__ import annotations

import json
import tomllib
from typing import Any


def parse_override(text: str) -> tuple[list[str], Any]:
    """``"optimizer.lr=0.01"`` → (["optimizer", "lr"], 0.01). Values parse as TOML
    literals (numbers, booleans, lists, quoted strings); anything else is a string."""
    if "=" not in text:
        raise ValueError(f"override {text!r}: expected section.key=value")
    key, raw = text.split("=", 1)
    path = [part for part in key.strip().split(".") if part]
    if len(path) < 2:
        raise ValueError(f"override {text!r}: the key must name a section and a setting")
    raw = raw.strip()
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    return path, value


def apply_overrides(data: dict[str, Any], overrides: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """Return a copy of ``data`` with ``section.key=value`` overrides applied."""
    result = json.loads(json.dumps(data))
    for text in overrides:
        path, value = parse_override(text)
        set_path(result, path, value, f"override {text!r}")
    return result


def set_path(data: dict[str, Any], path: list[str], value: Any, what: str) -> None:
    """``data[path[0]]...[path[-1]] = value`` in place, creating tables on the way;
    ``ValueError`` (prefixed with ``what``) when a step on the path is not a table."""
    target = data
    for part in path[:-1]:
        existing = target.setdefault(part, {})
        if not isinstance(existing, dict):
            raise ValueError(f"{what}: {part!r} is not a table")
        target = existing
    target[path[-1]] = value
