"""The Runs table's user-chosen parts: config columns picked from the runs' config keys
(as experiment trackers offer), a filter and sort on a final metric, and tags edited in
the table itself."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from app import data, ui
from sphere_engine.catalogue import find
from sphere_engine.catalogue.metric import split_column_key

CONFIG_COLUMNS = "runs.config_columns"
METRIC = "runs.metric"
AT_LEAST = "runs.metric_at_least"
RANK_UNTRUSTED = "runs.rank_untrusted"
#: The table's editing state: ``st.data_editor``'s key, a new one after each save (its
#: edits are kept by row position, which a live refresh may give to another run).
EDITS = "runs.table"
EDITS_VERSION = "runs.table_version"


def edits_key() -> str:
    return f"{EDITS}.{st.session_state.get(EDITS_VERSION, 0)}"


def config_keys(frame: pd.DataFrame) -> list[str]:
    """The dotted config keys of any run, sorted; those whose value differs between runs
    first (the ones worth a column)."""
    values: dict[str, set[str]] = {}
    for config in frame["config"]:
        for key, value in data.flatten_config(config or {}).items():
            values.setdefault(key, set()).add(repr(value))
    varying = sorted(k for k, seen in values.items() if len(seen) > 1)
    return varying + sorted(k for k in values if k not in varying)


def with_config_columns(table: pd.DataFrame, frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """``table`` with a column per config key (the runs of ``frame``, in its order)."""
    flat = [data.flatten_config(config or {}) for config in frame["config"]]
    extra = {f"config: {key}": [str(row.get(key, "")) for row in flat] for key in keys}
    return table.assign(**extra)


@dataclass(frozen=True)
class MetricFilter:
    """Rows whose final ``column`` is at least ``at_least`` (None: every row), sorted
    best first by it; runs that cannot be trusted (column ``untrusted``) after the
    ranked ones unless ``rank_untrusted``."""

    column: str
    at_least: float | None
    rank_untrusted: bool = False

    def apply(self, table: pd.DataFrame) -> pd.DataFrame:
        if not self.column or self.column not in table:
            return table
        source, key = split_column_key(self.column)
        metric = find(key, source)
        higher_is_better = bool(metric is None or metric.higher_is_better)
        values = pd.to_numeric(table[self.column], errors="coerce")
        if self.at_least is not None:
            table = table[values >= self.at_least]
            values = values[values >= self.at_least]
        order = values.sort_values(ascending=not higher_is_better, na_position="last").index
        if "untrusted" in table and not self.rank_untrusted:
            untrusted = table["untrusted"].astype(bool)
            order = [i for i in order if not untrusted[i]] + [i for i in order if untrusted[i]]
        return table.loc[order]


def controls(frame: pd.DataFrame) -> tuple[list[str], MetricFilter]:
    """The config-column picker and the metric filter."""
    keys = config_keys(frame)
    labels = data.key_column_labels()
    config_col, metric_col, value_col = st.columns([3, 2, 1])
    chosen = config_col.multiselect(
        "Config columns", keys, key=CONFIG_COLUMNS, placeholder="e.g. regularizer.weight"
    )
    column = metric_col.selectbox(
        "Sort by final metric (best first)",
        ["", *labels],
        key=METRIC,
        format_func=lambda c: labels.get(c, "—"),
    )
    at_least = value_col.number_input(
        "at least", value=None, key=AT_LEAST, placeholder="any", disabled=not column
    )
    rank_untrusted = bool(column) and metric_col.checkbox(
        "Rank untrusted runs too",
        key=RANK_UNTRUSTED,
        help="Runs with a critical finding (diverged, never learned, collapsed) are listed "
        "after the ranked ones unless this is on.",
    )
    return [k for k in chosen if k in keys], MetricFilter(column, at_least, rank_untrusted)


def save_tag_edits(shown: pd.DataFrame, edits: Mapping[str, Any]) -> int:
    """Write the tags edited in the table (``edited_rows``: row position → changes) to
    their runs; how many runs changed."""
    changed = 0
    for position, change in (edits.get("edited_rows") or {}).items():
        if "tags" not in change:
            continue
        run_id = shown["run_id"].iloc[int(position)]
        data.set_tags(run_id, str(change["tags"] or "").split(","))
        changed += 1
    if changed:
        ui.flash(f"Tags saved for {ui.plural(changed, 'run')}")
    return changed


def save_tag_edits_from_state(shown: pd.DataFrame) -> None:
    """The table's ``on_change``: save what was just edited."""
    if save_tag_edits(shown, st.session_state.get(edits_key()) or {}):
        st.session_state[EDITS_VERSION] = st.session_state.get(EDITS_VERSION, 0) + 1
