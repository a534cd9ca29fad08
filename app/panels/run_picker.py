"""The one run picker of the pages: one run per box (Run, Explorer, Geometry, whose side
by side has two boxes) or several runs (Compare), answered by the run catalogue.

A box never lists the whole store: it offers the newest ``PICK_LIMIT`` runs with results
(``run_catalogue.pick_options``), plus the runs picked and the link's; a search box
beside it asks the catalogue for runs whose name, id, tags, notes or config contain its
text (the newest ``PICK_LIMIT`` matches), so an old run is found by name whatever the
store's size. The link (``?run_id=`` / ``?runs=``) picks its runs; a link to a run that
does not exist is named in a warning (``ui.warn_unknown_runs``)."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from app import ui
from app.data import run_catalogue
from app.data.projects import selected_project, sweep_ids
from app.data.tables import preferred_runs, run_labels

SEARCH_SUFFIX = ".search"
SEARCH_HELP = (
    "The list shows the newest runs with results; type part of a run's name, id, tag, "
    "notes or config value to find any other run."
)


@dataclass(frozen=True)
class Picked:
    """What a multi-run picker chose (``run_ids``), the labels of every run it offered
    or the link named (run_id → "name · run_id") and the chosen runs' rows (run_id,
    name, kind, status, sweep_id, created_at)."""

    run_ids: list[str]
    labels: dict[str, str]
    frame: pd.DataFrame


def _search(key: str, place: Any = None) -> str:
    """The search box of the picker ``key`` (its text, stripped)."""
    text = (place or st).text_input(
        "Search runs",
        key=f"{key}{SEARCH_SUFFIX}",
        placeholder="name, id, tag or notes",
        help=SEARCH_HELP,
    )
    return str(text or "").strip()


def _offered(search: str, keep: Sequence[str]) -> pd.DataFrame:
    """The runs a box offers: those kept (picked, linked; those that exist), then the
    newest with results, or the newest matching ``search``."""
    kept = run_catalogue.runs_by_id(tuple(dict.fromkeys(r for r in keep if r)))
    listed = run_catalogue.pick_options(selected_project(), search)
    frames = [f for f in (kept, listed) if not f.empty]
    if not frames:
        return listed
    return pd.concat(frames, ignore_index=True).drop_duplicates("run_id")


def pick_runs(
    keys: Sequence[str],
    *,
    places: Sequence[Any] | None = None,
    run_params: Sequence[str] = (),
) -> list[str | None]:
    """One box per key (each in its place of ``places``: Geometry side by side), each
    with its search box. They start on ``ui.default_runs``: the link's ``?run_id=``,
    else the newest runs with results. The link names the first picked run: set when
    the page opens without one, replaced when the user picks another (which drops the
    link's ``run_params``, e.g. Explorer's ``step``: they were about the previous run).
    ``None`` per key when there are no runs."""
    wanted = ui.query_param(ui.RUN_ID_PARAM)
    linked = run_catalogue.runs_by_id((wanted,) if wanted else ())
    ui.warn_unknown_runs([wanted] if wanted else [], set(linked["run_id"]))
    newest = run_catalogue.pick_options(selected_project())
    start = pd.concat([f for f in (linked, newest) if not f.empty] or [newest])
    defaults = ui.default_runs(start, wanted, len(keys))
    picked: list[str | None] = []
    for slot, key in enumerate(keys):
        default = defaults[min(slot, len(defaults) - 1)] if defaults else None
        with places[slot] if places else nullcontext():
            pick_col, search_col = st.columns([3, 2])
            search = _search(key, search_col)
            labels = run_labels(_offered(search, [st.session_state.get(key), default]))
            options = list(labels)
            picked.append(
                pick_col.selectbox(
                    f"Run {slot + 1}" if len(keys) > 1 else "Run",
                    options,
                    index=options.index(default) if default in labels else None,
                    key=key,
                    format_func=lambda r, labels=labels: labels.get(r, r),
                    on_change=_name_in_link if slot == 0 else None,
                    args=(key, run_params),
                )
            )
    if picked[0] and not wanted:  # a wrong id stays in the link, with its warning
        st.query_params[ui.RUN_ID_PARAM] = picked[0]
    return picked


def _name_in_link(key: str, run_params: Sequence[str]) -> None:
    """The user picked another run: the link names it, without the previous run's
    ``run_params``."""
    run_id = st.session_state.get(key)
    if run_id:
        st.query_params[ui.RUN_ID_PARAM] = run_id
        for name in run_params:
            st.query_params.pop(name, None)


def pick_many(key: str, *, link_param: str, sweep_key: str, count: int = 2) -> Picked:
    """Compare's picker: a sweep box (picking a sweep picks its runs), a multi-select
    and its search box. It starts on the runs the link names (``?runs=a,b``, unknown
    ones named in a warning), else the ``count`` newest with results; runs deleted
    since they were picked are dropped."""
    linked = ui.query_ids(link_param)
    found = run_catalogue.runs_by_id(tuple(linked))
    ui.warn_unknown_runs(linked, set(found["run_id"]))
    st.selectbox(
        "Sweep (selects its runs)",
        ["", *sweep_ids(project=selected_project())],
        key=sweep_key,
        on_change=_select_sweep,
        args=(sweep_key, key),
    )
    if key not in st.session_state:
        newest = run_catalogue.pick_options(selected_project())
        st.session_state[key] = (
            found["run_id"].tolist() if linked else preferred_runs(newest, count)
        )
    chosen = run_catalogue.runs_by_id(tuple(st.session_state[key]))
    st.session_state[key] = chosen["run_id"].tolist()  # drop runs deleted since
    pick_col, search_col = st.columns([3, 1])
    search = _search(key, search_col)
    offered = _offered(search, [*st.session_state[key], *found["run_id"]])
    labels = run_labels(offered) if not offered.empty else {}
    run_ids = pick_col.multiselect(
        "Runs", list(labels), key=key, format_func=lambda r: labels.get(r, r)
    )
    frame = offered[offered["run_id"].isin(run_ids)].reset_index(drop=True)
    return Picked(list(run_ids), labels, frame)


def _select_sweep(sweep_key: str, key: str) -> None:
    sweep = st.session_state.get(sweep_key)
    if sweep:
        st.session_state[key] = run_catalogue.sweep_run_ids(sweep)
