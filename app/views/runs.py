"""Runs: one page of the store's runs at a time, answered by the run catalogue (search,
filters, sort, groups, paging); bulk tag / archive / delete and per-run actions."""

from __future__ import annotations

import math
from dataclasses import replace

import pandas as pd
import streamlit as st

from app import data, launch_form, ui
from app.data import run_catalogue
from app.data.run_catalogue import RunFilters
from app.data.slurm_states import refresh_slurm_states
from app.panels import runs_columns, runs_preview
from sphere_engine.catalogue.numbers import format_number

STATUSES = ("queued", "running", "finished", "failed", "cancelled", "lost")
KINDS = ("train", "analysis", "external")
CONFIRM_DELETE = "runs.confirm_delete"
SELECTED = "runs.selected"
PAGE = "runs.page"
PAGE_SIZE = "runs.page_size"
PAGE_SIZES = (25, 50, 100, 200)
GROUP_BY = "runs.group_by"
GROUP_KEY = "runs.group_key"
GROUP_PICK = "runs.group_pick"
GROUPINGS = {
    "": "—",
    "sweep_id": "sweep",
    "study_id": "study",
    "tag": "tag",
    "config": "config key",
}


def main() -> None:
    st.title("Runs")
    project = data.selected_project()
    base = _filters(project)
    order = runs_columns.chosen_order()  # the sort widgets' values: one query, not two
    frame, total = _page(base, **order)
    if total == 0 and base == RunFilters(project=project):
        ui.empty_state(
            "No runs yet. Launch one from the form or a preset, or record one "
            "with `spherescope train CONFIG.toml`."
        )
        return
    keys, order = runs_columns.controls()
    filters = _grouping(base, runs_columns.config_keys(), str(order["sort"]))
    if filters != base:
        frame, total = _page(filters, **order)
    first = ui.first_paint("runs")  # the first screenful without the grid, then the rest
    active = bool(frame["status"].isin(data.ACTIVE_STATUSES).any())
    _table(filters, order, keys, live=active and not first, first=first)
    _paging(total)  # outside the table's fragment: a new page reruns the whole page
    if first:
        ui.follow_up()
        return
    _actions(frame)


def _filters(project: str | None) -> RunFilters:
    search_col, status_col, kind_col, archived_col = st.columns([3, 2, 1.4, 1.6])
    search = search_col.text_input(
        "Search", key="runs.search", placeholder="name, id, tag, notes or config value"
    )
    status = status_col.multiselect("Status", STATUSES, key="runs.status")
    kind = kind_col.selectbox("Kind", ["", *KINDS], key="runs.kind")
    tag_col, sweep_col, _ = st.columns([2, 3, 1])
    tag = tag_col.selectbox("Tag", ["", *data.tags()], key="runs.tag")
    sweeps, studies = run_catalogue.sweeps_and_studies(project)
    groups = {"": "", **{f"sweep:{s}": s for s in sweeps}, **{f"study:{s}": s for s in studies}}
    group = sweep_col.selectbox(
        "Sweep / study", list(groups), key="runs.sweep",
        format_func=lambda g: g.replace(":", " ", 1) if g else "",
    )  # fmt: skip
    archived = archived_col.toggle("Show archived", key="runs.archived")
    grouping, _, value = group.partition(":")
    return RunFilters(
        project=project, search=search.strip(), status=tuple(status), kind=kind or None,
        tag=tag or None, sweep_id=value if grouping == "sweep" else None,
        study_id=value if grouping == "study" else None, archived=None if archived else False,
    )  # fmt: skip


def _page(filters: RunFilters, **order: object) -> tuple[pd.DataFrame, int]:
    """The page of runs the paging widgets ask for (its number kept within the pages)."""
    size = int(st.session_state.get(PAGE_SIZE, 50))
    page = max(int(st.session_state.get(PAGE, 1) or 1), 1)
    frame, total = run_catalogue.runs_page(filters, offset=(page - 1) * size, limit=size, **order)
    pages = max(math.ceil(total / size), 1)
    if page > pages:  # fewer matches than before: the last page
        st.session_state[PAGE] = pages
        frame, total = run_catalogue.runs_page(
            filters, offset=(pages - 1) * size, limit=size, **order
        )
    return frame, total


def _grouping(filters: RunFilters, keys: list[str], sort: str) -> RunFilters:
    """Groups (sweep, study, tag or a config key) with count and mean ± std of the
    sorted metric (else the main metric); picking one shows only its runs."""
    by_col, key_col, pick_col = st.columns([1, 2, 2])
    by = by_col.selectbox(
        "Group by", list(GROUPINGS), key=GROUP_BY, format_func=GROUPINGS.__getitem__
    )
    if by == "config":
        key = key_col.selectbox("Config key", keys, key=GROUP_KEY)
        by = f"config.{key}" if key else ""
    if not by:
        return filters
    metric = sort if runs_columns.is_metric(sort) and sort != "main_value" else None
    groups = run_catalogue.run_groups(filters, by, metric)
    if groups.empty:
        return filters
    label = data.key_column_labels().get(metric or "", "main metric")
    pick = pick_col.selectbox(
        "Show group", ["", *(str(g) for g in groups["group"] if pd.notna(g))], key=GROUP_PICK
    )
    table = pd.DataFrame(
        {
            "group": groups["group"].fillna("–").astype(str),
            "runs": [f"{int(n):,}" for n in groups["runs"]],  # a count: no decimals
            f"{label} mean ± std": [
                f"{format_number(m)} ± {format_number(s)}"
                for m, s in zip(groups["mean"], groups["std"], strict=True)
            ],
        }
    )
    st.dataframe(table, hide_index=True, height=min(36 * len(table) + 38, 260))
    if not pick:
        return filters
    if by == "tag":
        return replace(filters, tag=pick)
    if by == "sweep_id":
        return replace(filters, sweep_id=pick)
    if by == "study_id":
        return replace(filters, study_id=pick)
    return replace(filters, config=(*filters.config, (by.removeprefix("config."), pick)))


def _table(filters: RunFilters, order: dict, keys: list[str], *, live: bool, first: bool) -> None:
    @st.fragment(run_every=ui.LIVE_INTERVAL_S if live else None)
    @ui.guarded
    def table() -> None:
        refresh_slurm_states(str(data.home()))  # SLURM's word on its runs, every 10 s
        frame, total = _page(filters, **order)
        if frame.empty:
            st.info("No run matches these filters.", icon=":material/info:")
            return
        shown = runs_columns.display_table(frame, keys)
        if first:
            runs_preview.preview(shown, runs_columns.headers(frame))
        else:
            # Tags are edited in the table (comma-separated); every other column is read-only.
            st.data_editor(
                shown,
                hide_index=True,
                width="stretch",
                key=runs_columns.edits_key(),
                disabled=[c for c in shown.columns if c != "tags"],
                on_change=runs_columns.save_tag_edits_from_state,
                args=(shown,),
                placeholder="–",
                column_config=runs_columns.column_config(frame),
            )
        _counts(total, len(frame), live=live)

    table()


def _counts(total: int, shown: int, *, live: bool) -> None:
    """Which runs of how many are shown, and the store's disk usage."""
    size = int(st.session_state.get(PAGE_SIZE, 50))
    pages = max(math.ceil(total / size), 1)
    page = min(max(int(st.session_state.get(PAGE, 1) or 1), 1), pages)
    first_row = (page - 1) * size + 1
    disk = run_catalogue.disk_total(project=data.selected_project())
    st.caption(
        f"{first_row:,}–{first_row + shown - 1:,} of "
        f"{total:,} run{'' if total == 1 else 's'} (page {page:,} of {pages:,}) · "
        f"{runs_columns.format_bytes(disk)} on disk in all (trash excluded)"
        + (" · updating live" if live else "")
    )


def _paging(total: int) -> None:
    size = int(st.session_state.get(PAGE_SIZE, 50))
    pages = max(math.ceil(total / size), 1)
    size_col, page_col, _ = st.columns([1, 1, 4])
    size_col.selectbox("Runs per page", PAGE_SIZES, index=1, key=PAGE_SIZE)
    page_col.number_input("Page", 1, pages, step=1, key=PAGE)


def _select_page(run_ids: list[str]) -> None:
    st.session_state[SELECTED] = run_ids


def _actions(frame: pd.DataFrame) -> None:
    st.subheader("Actions")
    labels = data.run_labels(frame)
    st.session_state[SELECTED] = [r for r in st.session_state.get(SELECTED, []) if r in labels]
    pick_col, all_col = st.columns([4, 1.5])
    selected = pick_col.multiselect(
        "Runs to act on", list(labels), key=SELECTED, format_func=lambda r: labels.get(r, r)
    )
    all_col.button(
        "Select this page", key="runs.select_page", on_click=_select_page,
        args=(list(labels),), icon=":material/select_all:",
    )  # fmt: skip
    if not selected:
        st.caption("Select runs to tag, archive, delete, cancel, clone, annotate, compare or open.")
        return
    _bulk(selected)
    cancel_col, clone_col, compare_col, _ = st.columns(4)
    if cancel_col.button("Cancel", key="runs.cancel", icon=":material/stop_circle:"):
        for run_id in selected:
            data.cancel_run(run_id)
        run_catalogue.clear()
        ui.flash(f"Cancel requested for {ui.plural(len(selected), 'run')}")
        st.rerun()
    if clone_col.button(
        "Clone into the launch form", key="runs.clone", icon=":material/content_copy:"
    ):
        launch_form.load_into_form(data.run(selected[0]).config)
        st.switch_page(ui.LAUNCH_PAGE)
    compare_col.page_link(
        ui.COMPARE_PAGE,
        label="Compare",
        icon=":material/compare_arrows:",
        query_params={"runs": ",".join(selected)},
    )
    for run_id in selected[:1]:
        ui.run_link(run_id, label=f"Open {labels.get(run_id, run_id)}")
    if len(selected) == 1:
        _tags_and_notes(selected[0])


def _bulk(selected: list[str]) -> None:
    """Tag, archive, unarchive or delete every selected run."""
    count = ui.plural(len(selected), "run")
    tag_col, add_col, archive_col, unarchive_col, delete_col = st.columns([2, 1, 1, 1, 1])
    new_tag = tag_col.text_input("Tag to add", key="runs.bulk_tag", placeholder="e.g. baseline")
    if add_col.button("Add tag", key="runs.tag_add", icon=":material/sell:", disabled=not new_tag):
        run_catalogue.add_tags(selected, [new_tag])
        ui.flash(f"Tagged {count} “{new_tag.strip()}”")
        st.rerun()
    if archive_col.button("Archive", key="runs.archive", icon=":material/archive:"):
        run_catalogue.archive_runs(selected)
        st.session_state.pop(SELECTED, None)
        ui.flash(f"Archived {count} (shown again with “Show archived”)")
        st.rerun()
    if unarchive_col.button("Unarchive", key="runs.unarchive", icon=":material/unarchive:"):
        run_catalogue.archive_runs(selected, archived=False)
        ui.flash(f"Unarchived {count}")
        st.rerun()
    if delete_col.button("Delete…", key="runs.delete", icon=":material/delete:"):
        st.session_state[CONFIRM_DELETE] = list(selected)
    pending = st.session_state.get(CONFIRM_DELETE)
    if pending:
        st.warning(
            f"Delete {ui.plural(len(pending), 'run')}? They go to the store's trash; "
            "`spherescope store gc` frees their space for good.",
            icon=":material/warning:",
        )
        yes, no = st.columns(2)
        if yes.button("Yes, delete", key="runs.delete.confirm", type="primary"):
            run_catalogue.delete_runs(pending)
            st.session_state.pop(CONFIRM_DELETE, None)
            st.session_state.pop(SELECTED, None)
            ui.flash(f"Moved {ui.plural(len(pending), 'run')} to the trash")
            st.rerun()
        if no.button("Keep them", key="runs.delete.abort"):
            st.session_state.pop(CONFIRM_DELETE, None)
            st.rerun()


def _tags_and_notes(run_id: str) -> None:
    record = data.run(run_id)
    with st.form(f"runs.meta.{run_id}"):
        tag_text = st.text_input("Tags (comma-separated)", value=", ".join(record.tags))
        notes = st.text_area("Notes", value=record.notes)
        if st.form_submit_button("Save tags and notes"):
            data.set_tags(run_id, tag_text.split(","))
            data.set_notes(run_id, notes)
            run_catalogue.clear()
            ui.flash("Saved")
            st.rerun()


ui.run_page(main)
