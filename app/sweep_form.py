"""The sweep part of the launch form: a grid of setting values × seeds, checked strictly.

Seeds and values are parsed without guessing: a seed that is not a whole number is an
error, never dropped, so the button's run count is the number of runs launched. Every
combination is validated (``data.sweep_error``, the launcher's own check) before the
button is enabled; each problem is one line naming the field.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from app import data
from app.launch_fields import parse_list

MAX_GRID_KEYS = 3


def parse_seeds(text: str) -> list[int]:
    """ "0, 1, 2" → [0, 1, 2]; empty → [] (the form's seed). Anything that is not a whole
    number ≥ 0 is a ``ValueError`` naming it."""
    seeds: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if not part.isdigit():
            raise ValueError(f"Seeds: {part!r} is not a whole number ≥ 0")
        seeds.append(int(part))
    if len(set(seeds)) != len(seeds):
        raise ValueError("Seeds: a seed is listed twice")
    return seeds


def sweep_size(grid: dict[str, list[Any]], seeds: list[int]) -> int:
    size = max(len(seeds), 1)
    for values in grid.values():
        size *= len(values)
    return size


def sweep_widgets(
    config: dict[str, Any], *, check: bool = True
) -> tuple[dict[str, list[Any]], list[int], str | None]:
    """Draw the grid rows and the seeds; return (grid, seeds, the first problem or None).
    ``check``: also validate every combination (when the form's config is valid)."""
    from sphere_engine.config import field_help

    keys = sorted(data.flatten_config(config))
    problems: list[str] = []
    grid: dict[str, list[Any]] = {}
    st.caption(
        "Each row varies one setting over comma-separated values; every combination "
        "runs once per seed."
    )
    for row in range(MAX_GRID_KEYS):
        key_col, values_col = st.columns([1, 2])
        key = key_col.selectbox(
            f"Setting {row + 1}",
            ["", *keys],
            key=f"launch.grid.key{row}",
            format_func=lambda k: _key_label(k, field_help),
        )
        text = values_col.text_input(
            f"Values {row + 1}", key=f"launch.grid.values{row}", placeholder="e.g. 0, 0.1, 0.5"
        )
        values = parse_list(text)
        if key and not values:
            problems.append(f"Values {row + 1}: enter comma-separated values for {key}")
        elif values and not key:
            problems.append(f"Setting {row + 1}: choose the setting these values vary")
        elif key in grid:
            problems.append(f"Setting {row + 1}: {key} is already varied in another row")
        elif key:
            grid[key] = values
    seed_text = st.text_input(
        "Seeds",
        value="0, 1, 2",
        key="launch.seeds",
        help="Comma-separated whole numbers ≥ 0; empty: the seed on the Training tab",
    )
    seeds: list[int] = []
    try:
        seeds = parse_seeds(seed_text)
    except ValueError as error:
        problems.append(str(error))
    if check and not problems:
        problem = data.sweep_error(config, grid, seeds)
        if problem:
            problems.append(problem)
    for problem in problems:
        st.error(problem, icon=":material/block:")
    return grid, seeds, problems[0] if problems else None


def _key_label(key: str, field_help: Any) -> str:
    """ "optimizer.lr" → "Learning rate (optimizer.lr)"; options keep their dotted name."""
    if not key:
        return "(none)"
    section, _, name = key.partition(".")
    try:
        label = field_help(section, name).get("label")
    except ValueError:
        label = None
    return f"{label} ({key})" if label else key
