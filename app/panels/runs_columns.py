"""The Runs table's columns and order: the key metrics beside the name (the main metric
first, then loss and norm variance), a marker beside the status of a run whose result
cannot be trusted, findings as icons with counts, disk usage, config columns picked
from the runs' keys, and every number written by the one number format. Also the sort
choices (any key metric or config key, answered by the catalogue) and the tags edited
in the table itself."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd
import streamlit as st

from app import data, ui
from app.data.findings import table_findings
from app.panels import runs_icons
from sphere_engine.catalogue import Source, column_key, find, header
from sphere_engine.catalogue.metric import split_column_key
from sphere_engine.catalogue.numbers import format_number

CONFIG_COLUMNS = "runs.config_columns"
SORT = "runs.sort"
REVERSED = "runs.reversed"
RANK_UNTRUSTED = "runs.rank_untrusted"
#: The table's editing state: ``st.data_editor``'s key, a new one after each save (its
#: edits are kept by row position, which a live refresh may give to another run).
EDITS = "runs.table"
EDITS_VERSION = "runs.table_version"

MAIN = "main"
TRUST = "trust"
DISK = "disk"
CONFIG_PREFIX = "config."
#: Beside the name, in this order: the main metric, then loss and norm variance.
BESIDE_NAME = tuple(column_key(Source.TRAINING_BATCH, k) for k in ("loss/total", "norm/var"))
RECALL = column_key(Source.EVALUATION, "recall@1")  # the first of MAIN_METRICS
LEADING = ["name", MAIN, *BESIDE_NAME, "status", TRUST, "findings", "open", "progress"]
TRAILING = [
    "elapsed", DISK, "finding titles", "device", "runs on", "kind", "tags", "sweep_id",
    "created", "message", "run_id", "untrusted",
]  # fmt: skip
#: The name column's width (px) fits the page's longest name between these bounds: a
#: "medium" column cut lab names ("sec-w0.5-lr3e-4-seed2-resnet50-cub200-fold3") at 1280
#: px, and wider than the upper bound would push the key metrics beside it out of view.
NAME_PX = (200, 430)
#: The grid's 14 px sans-serif averages ~6.4 px a character (digits and capitals more).
NAME_CHAR_PX, NAME_PAD_PX = 6.9, 30
NAME_HELP = "The run's name (drag the column's edge to widen it for a longer one)"
#: Catalogue columns the table can be sorted by → their label.
COLUMN_SORTS = {
    "created_at": "created",
    "main_value": "main metric",
    "name": "name",
    "status": "status",
    "disk_bytes": "disk usage",
    "finished_at": "ended",
}
TRUST_HELP = (
    "Marked: a critical finding fired (diverged, never learned, collapsed): this run's "
    "result cannot be trusted; left out of rankings unless asked."
)


def edits_key() -> str:
    return f"{EDITS}.{st.session_state.get(EDITS_VERSION, 0)}"


def config_keys() -> list[str]:
    """The dotted config keys of every run of the chosen project (the catalogue's, not
    only this page's rows: a key that only older runs have can be sorted and grouped
    by too), those whose value differs between runs first."""
    from app.data import run_catalogue

    return run_catalogue.config_keys(project=data.selected_project())


def sort_options(keys: list[str]) -> dict[str, str]:
    """Sort key (a catalogue column, ``eval:``/``train:`` final metric or
    ``config.<key>``) → its label."""
    metrics = {column: f"final {label}" for column, label in data.key_column_labels().items()}
    configs = {f"{CONFIG_PREFIX}{key}": f"config: {key}" for key in keys}
    return {**COLUMN_SORTS, **metrics, **configs}


def is_metric(sort: str) -> bool:
    return sort == "main_value" or sort.startswith(tuple(f"{s.value}:" for s in Source))


def best_first(sort: str) -> bool:
    """Whether ``sort``'s natural order is descending: newest, largest, or the best value
    of a metric by its direction (lower loss first)."""
    if sort in ("created_at", "finished_at", "disk_bytes", "main_value"):
        return True
    if is_metric(sort):
        source, key = split_column_key(sort)
        metric = find(key, source)
        return bool(metric is None or metric.higher_is_better)
    return False


def format_bytes(size: object) -> str:
    """``12.3 MB``: bytes through the one number format."""
    if size is None or pd.isna(size):  # type: ignore[arg-type]
        return "–"
    value = float(size)  # type: ignore[arg-type]
    for unit in ("B", "kB", "MB", "GB"):
        if abs(value) < 1000:
            return f"{format_number(value)} {unit}"
        value /= 1000
    return f"{format_number(value)} TB"


def main_label(frame: pd.DataFrame) -> str:
    """The main column's header: the metric's label when every run shares it."""
    names = {m for m in frame["main_metric"] if isinstance(m, str) and m}
    if len(names) == 1:
        return header(names.pop(), Source.EVALUATION)
    return "main metric"


def _number_text(values: pd.Series) -> list[str]:
    return [format_number(v) if pd.notna(v) else "–" for v in pd.to_numeric(values, "coerce")]


def display_table(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """The Runs table of one page of runs (``data.run_catalogue.runs_page``): the columns
    ``LEADING`` then ``TRAILING`` then a column per chosen config key, numbers as text."""
    shown = data.runs_table(frame).reset_index(drop=True)
    live = set(frame.loc[frame["status"] == "running", "run_id"])
    found = table_findings(frame, live)  # cached per run: the same reads runs_table made
    # the catalogue's main value (stored at the run's end), else the live R@1 column
    main = pd.to_numeric(frame["main_value"], errors="coerce").reset_index(drop=True)
    shown[MAIN] = _number_text(main.fillna(shown[RECALL]))
    for column in data.KEY_COLUMNS:
        shown[column] = _number_text(shown[column])
    shown["elapsed"] = _number_text(shown["elapsed"])
    shown[DISK] = [format_bytes(size) for size in frame["disk_bytes"]]
    shown["findings"] = [runs_icons.findings_icon(f) for f in found]
    shown["finding titles"] = ["; ".join(d.title for d in f or []) for f in found]
    shown[TRUST] = [runs_icons.untrusted_icon() if u else None for u in shown["untrusted"]]
    shown["open"] = [f"run?run_id={r}" for r in shown["run_id"]]
    # R@1 again only where the main column shows another metric
    duplicate = {RECALL} if main_label(frame) == header("recall@1", Source.EVALUATION) else set()
    extra = [c for c in data.KEY_COLUMNS if c not in {*BESIDE_NAME, *duplicate}]
    if frame["archived"].any():
        shown["archived"] = frame["archived"].fillna(False).astype(bool).to_numpy()
        extra.append("archived")
    table = shown[[*LEADING, *extra, *TRAILING]]
    flat = [data.flatten_config(config or {}) for config in frame["config"]]
    configs = {f"config: {key}": [str(row.get(key, "")) for row in flat] for key in keys}
    return table.assign(**configs)


def headers(frame: pd.DataFrame) -> dict[str, str]:
    """Column → header of the table's metric columns (the main one named by its metric)."""
    return {MAIN: main_label(frame), **data.key_column_labels()}


def column_config(frame: pd.DataFrame) -> dict[str, Any]:
    """The grid's column settings for ``display_table``."""
    labels = data.key_column_labels()

    def metric(label: str, **options: Any) -> Any:
        return st.column_config.TextColumn(label, alignment="right", **options)

    return {
        "name": st.column_config.TextColumn(
            "name", width=name_width(frame["name"]), pinned=True, help=NAME_HELP
        ),
        MAIN: metric(main_label(frame), width="small", help="The run's main metric, final value"),
        **{c: metric(labels[c], width="small", help=c) for c in labels},
        "status": st.column_config.TextColumn("status", width="small"),
        TRUST: st.column_config.ImageColumn(" ", width=24, help=TRUST_HELP),
        "findings": st.column_config.ImageColumn(
            "findings", width=72, help="Critical / warning / info findings (counts)"
        ),
        "open": st.column_config.LinkColumn("open", display_text="open ↗", width=56),
        "progress": st.column_config.ProgressColumn(
            "progress", min_value=0.0, max_value=1.0, format="percent", width="small"
        ),
        "elapsed": metric("elapsed (s)", help="Seconds since the run started"),
        DISK: metric("disk", help="Bytes the run's folder holds (measured at its end and by gc)"),
        "created": st.column_config.DatetimeColumn("created", format="YYYY-MM-DD HH:mm"),
        "tags": st.column_config.TextColumn(
            "tags", help="Comma-separated; edit in place (saved when you leave the cell)"
        ),
        "untrusted": None,  # the marker shows it; kept in the data for rankings
    }


def name_width(names: Iterable[object]) -> int:
    """The name column's width in pixels: wide enough for the page's longest name (as
    the grid draws it), at least Streamlit's "medium" and at most ``NAME_PX[1]``."""
    longest = max((len(str(n)) for n in names if isinstance(n, str)), default=0)
    low, high = NAME_PX
    return int(min(max(longest * NAME_CHAR_PX + NAME_PAD_PX, low), high))


def order(sort: str, reverse: bool, rank_untrusted: bool) -> dict[str, Any]:
    """``runs_page``'s order arguments: ``sort`` in its natural order (newest, best
    first) unless ``reverse``; untrusted runs after the others when ranking by a
    metric unless ``rank_untrusted``."""
    return {
        "sort": sort,
        "descending": best_first(sort) != reverse,
        "untrusted_last": is_metric(sort) and not rank_untrusted,
    }


def chosen_order() -> dict[str, Any]:
    """``order`` of the sort widgets' current values (before they are drawn)."""
    state = st.session_state
    return order(
        state.get(SORT) or "created_at",
        bool(state.get(REVERSED)),
        bool(state.get(RANK_UNTRUSTED)),
    )


def controls() -> tuple[list[str], dict[str, Any]]:
    """The config-column picker and the sort: (chosen config keys, ``order``)."""
    keys = config_keys()
    chosen = st.session_state.get(CONFIG_COLUMNS) or []
    options = sort_options(list(dict.fromkeys([*chosen, *keys])))
    config_col, sort_col, order_col = st.columns([3, 2, 1])
    picked = config_col.multiselect(
        "Config columns", keys, key=CONFIG_COLUMNS, placeholder="e.g. regularizer.weight"
    )
    sort = sort_col.selectbox(
        "Sort by", list(options), key=SORT, format_func=lambda k: options.get(k, k)
    )
    reverse = order_col.toggle("Reverse", key=REVERSED, help="Oldest / worst / A–Z last first")
    rank_untrusted = is_metric(sort) and sort_col.checkbox(
        "Rank untrusted runs too",
        key=RANK_UNTRUSTED,
        help="Runs with a critical finding (diverged, never learned, collapsed) are listed "
        "after the ranked ones unless this is on.",
    )
    return [k for k in picked if k in keys], order(sort, reverse, rank_untrusted)


def save_tag_edits(shown: pd.DataFrame, edits: Mapping[str, Any]) -> int:
    """Write the tags edited in the table (``edited_rows``: row position → changes) to
    their runs; how many runs changed."""
    from app.data import run_catalogue

    changed = 0
    for position, change in (edits.get("edited_rows") or {}).items():
        if "tags" not in change:
            continue
        run_id = shown["run_id"].iloc[int(position)]
        data.set_tags(run_id, str(change["tags"] or "").split(","))
        changed += 1
    if changed:
        run_catalogue.clear()
        ui.flash(f"Tags saved for {ui.plural(changed, 'run')}")
    return changed


def save_tag_edits_from_state(shown: pd.DataFrame) -> None:
    """The table's ``on_change``: save what was just edited."""
    if save_tag_edits(shown, st.session_state.get(edits_key()) or {}):
        st.session_state[EDITS_VERSION] = st.session_state.get(EDITS_VERSION, 0) + 1
