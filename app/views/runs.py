"""Runs: every run with status, progress, elapsed time, device and key metrics; actions."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import data, launch_form, ui
from app.data.slurm_states import refresh_slurm_states
from app.panels import runs_columns, runs_preview

STATUSES = ("queued", "running", "finished", "failed", "cancelled", "lost")
CONFIRM_DELETE = "runs.confirm_delete"
RUNS_SHOWN = data.RUNS_SHOWN


def main() -> None:
    st.title("Runs")
    # -- widgets: filters ------------------------------------------------------------
    search_col, status_col, tag_col, kind_col = st.columns([2, 2, 1, 1])
    search = search_col.text_input("Search (name or id)", key="runs.search")
    status = status_col.multiselect("Status", STATUSES, key="runs.status")
    tag = tag_col.selectbox("Tag", ["", *data.tags()], key="runs.tag")
    kind = kind_col.selectbox("Kind", ["", "train", "analysis", "external"], key="runs.kind")
    # -- data ------------------------------------------------------------------------
    everything = data.runs(limit=RUNS_SHOWN)
    # -- empty state -----------------------------------------------------------------
    if everything.empty:
        ui.empty_state(
            "No runs yet. Launch one from the form or a preset, or record one "
            "with `spherescope train CONFIG.toml`."
        )
    active = bool(everything["status"].isin(data.ACTIVE_STATUSES).any())
    config_columns, metric_filter = runs_columns.controls(everything)
    first = ui.first_paint("runs")  # the first screenful without the grid, then the rest
    _table(
        search,
        tuple(status),
        tag,
        kind,
        live=active and not first,
        extra=(config_columns, metric_filter),
        first=first,
    )
    if first:
        ui.follow_up()
        return
    _actions(everything)


def _table(
    search: str,
    status: tuple[str, ...],
    tag: str,
    kind: str,
    *,
    live: bool,
    extra: tuple[list[str], runs_columns.MetricFilter],
    first: bool = False,
) -> None:
    config_columns, metric_filter = extra

    @st.fragment(run_every=ui.LIVE_INTERVAL_S if live else None)
    @ui.guarded
    def table() -> None:
        # Only the filters set: without any, this is the very call (and cache entry) of
        # main()'s listing, so a render lists the runs once, not twice (500 runs: ~0.2 s).
        refresh_slurm_states(str(data.home()))  # SLURM's word on its runs, every 10 s
        filters = {"status": status, "search": search, "tag": tag, "kind": kind}
        chosen = {name: value for name, value in filters.items() if value}
        frame = data.runs(limit=RUNS_SHOWN, **chosen)
        if frame.empty:
            st.info("No run matches these filters.", icon=":material/info:")
            return
        shown = data.runs_table(frame)
        shown.insert(1, "open", [f"run?run_id={r}" for r in shown["run_id"]])
        if config_columns:
            shown = runs_columns.with_config_columns(shown, frame, config_columns)
        shown = metric_filter.apply(shown).reset_index(drop=True)
        if shown.empty:
            st.info("No run reaches that final value.", icon=":material/info:")
            return
        if first:
            runs_preview.preview(shown)
            return
        # Tags are edited in the table (comma-separated); every other column is read-only.
        st.data_editor(
            shown,
            hide_index=True,
            width="stretch",
            key=runs_columns.edits_key(),
            disabled=[c for c in shown.columns if c != "tags"],
            on_change=runs_columns.save_tag_edits_from_state,
            args=(shown,),
            placeholder="–",  # queued runs have no elapsed time or metrics yet
            column_config={
                "tags": st.column_config.TextColumn(
                    "tags", help="Comma-separated; edit in place (saved when you leave the cell)"
                ),
                "open": st.column_config.LinkColumn("open", display_text="open ↗", width="small"),
                "progress": st.column_config.ProgressColumn(
                    "progress", min_value=0.0, max_value=1.0, format="percent"
                ),
                "elapsed": st.column_config.NumberColumn(
                    "elapsed (s)", format="%.0f", help="Seconds since the run started"
                ),
                "created": st.column_config.DatetimeColumn("created", format="YYYY-MM-DD HH:mm"),
                **{
                    column: st.column_config.NumberColumn(title, format="%.3g", help=column)
                    for column, title in data.key_column_labels().items()
                },
            },
        )
        total = frame.attrs.get("total", len(frame))
        shown_of = f" (the newest {len(frame)} shown)" if total > len(frame) else ""
        st.caption(ui.plural(total, "run") + shown_of + (" · updating live" if live else ""))

    table()


def _actions(frame: pd.DataFrame) -> None:
    st.subheader("Actions")
    labels = data.run_labels(frame)
    selected = st.multiselect(
        "Runs to act on", list(labels), key="runs.selected", format_func=lambda r: labels.get(r, r)
    )
    if not selected:
        st.caption("Select runs to cancel, clone, delete, tag, annotate, compare or open.")
        return
    cancel_col, clone_col, compare_col, delete_col = st.columns(4)
    if cancel_col.button("Cancel", key="runs.cancel", icon=":material/stop_circle:"):
        for run_id in selected:
            data.cancel_run(run_id)
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
            for run_id in pending:
                data.delete_run(run_id)
            st.session_state.pop(CONFIRM_DELETE, None)
            st.session_state.pop("runs.selected", None)
            st.rerun()
        if no.button("Keep them", key="runs.delete.abort"):
            st.session_state.pop(CONFIRM_DELETE, None)
            st.rerun()
    for run_id in selected[:1]:
        ui.run_link(run_id, label=f"Open {labels.get(run_id, run_id)}")
    if len(selected) == 1:
        _tags_and_notes(selected[0])


def _tags_and_notes(run_id: str) -> None:
    record = data.run(run_id)
    with st.form(f"runs.meta.{run_id}"):
        tag_text = st.text_input("Tags (comma-separated)", value=", ".join(record.tags))
        notes = st.text_area("Notes", value=record.notes)
        if st.form_submit_button("Save tags and notes"):
            data.set_tags(run_id, tag_text.split(","))
            data.set_notes(run_id, notes)
            ui.flash("Saved")
            st.rerun()


ui.run_page(main)
