"""Run: one run's diagnostics, updating live while it trains."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from app import data, ui
from app.data.evaluation_set import evaluation_label, evaluation_set, split_title
from app.panels import (
    chart_libraries,
    custom_metrics,
    evaluations,
    live_charts,
    live_feed,
    run_notes,
    run_tiles,
    slurm_job,
    training_charts,
)
from app.panels import findings as findings_panel
from app.panels.chart_controls import chart_controls
from app.panels.downloads import downloads
from app.panels.live_feed import DEFAULT_EVALS, EVAL_KEYS, ChartRequest
from app.panels.model_exports import model_exports
from app.panels.run_picker import pick_runs
from sphere_engine.catalogue import CHART_SECTIONS

#: While the run trains the header (status, progress, elapsed) is redrawn this often;
#: the charts update on their own (``app.panels.live_charts``, every ``POLL_S``, with
#: their "up to step N" caption). Each redraw is a script run and a re-render of the
#: header in every watching tab, on the cores the run trains on: the step is already
#: live under the charts, so the header's numbers may lag a little more.
HEADER_S = 10.0
LOG_TAIL_BYTES, LOG_TAIL_LINES = 20_000, 200
LOG_REFRESH_S = 5.0  # a log is read, not watched: a slower refresh halves the reruns
LOG_OPEN = "run.log_open"  # the log expander's state (open: read and draw the tail)
#: The open tab of charts (``catalogue.CHART_SECTIONS``).
SECTION = "run.section"
#: This session's live feed token (``live_feed.open_feed``: reused while it shows the
#: same charts, so a page rerun continues its incremental reads).
FEED = "run.feed"
CHARTS = "run.charts"


@dataclass(frozen=True)
class _Options:
    """The chart controls."""

    log_y: bool
    log_color: bool
    x: str
    smoothing: float


def main() -> None:
    st.title("Run")
    warming = chart_libraries.start("run.warm")
    # -- widgets ---------------------------------------------------------------------
    (run_id,) = pick_runs(["run.select"])
    if run_id:
        record = data.run(run_id)  # the page's one read of the run (its tiles reread)
        names = data.metric_names([run_id])
        # The tiles sit here but are read and drawn after the charts are sent (their
        # final values, findings and evaluation state): the first chart comes first.
        tiles_slot = st.container()
        run_notes.notes(record)
    controls, log_color = chart_controls("run", log_color=True)
    options = _Options(controls.log_y, log_color, controls.x, controls.smoothing)
    # -- empty state -----------------------------------------------------------------
    if not run_id:
        chart_libraries.done(warming)  # no chart to come: nothing to load it for
        ui.empty_state("No runs yet: launch one, then watch its norms here live.")
    logged_evals = data.eval_names([run_id])
    eval_choices = [*EVAL_KEYS, *[e for e in logged_evals if e not in EVAL_KEYS]]
    where = evaluation_set(record)  # a fold run evaluates on its validation classes
    evals = st.multiselect(
        f"Evaluation metrics on the {where} (empty: the key metrics)",
        eval_choices,
        key="run.evals",
        default=[e for e in DEFAULT_EVALS if e in logged_evals],
        format_func=lambda key: evaluation_label(key, where),
    )
    # -- charts (live while the run is active) ---------------------------------------
    first = ui.first_paint("run")
    _live(record, names, options, evals=tuple(evals), first=first, tiles_slot=tiles_slot)
    chart_libraries.done(warming)


def _tiles(record: Any, *, has_metrics: bool) -> None:
    """The key numbers at the top, redrawn every ``HEADER_S`` while the run trains
    (reading the run anew); the page's own read draws them first."""
    page_read = [record]
    live = data.is_active(record.status)

    @st.fragment(run_every=HEADER_S if live else None)
    @ui.guarded
    def tiles() -> None:
        latest = page_read.pop() if page_read else data.run(record.run_id)
        if live and (
            not data.is_active(latest.status)
            or (not has_metrics and data.metric_names([record.run_id]))
        ):
            # The run ended, or logged its first values: draw the page anew (its
            # charts, or the finished run without polling).
            st.rerun(scope="app")
        run_tiles.tiles(latest)
        slurm_job.show(latest)

    tiles()


def _live(
    record: Any,
    names: list[str],
    options: _Options,
    *,
    evals: tuple[str, ...],
    first: bool,
    tiles_slot: Any,
) -> None:
    """The charts (live while the run trains), the tiles above them (in
    ``tiles_slot``) and the findings, then the log, the checkpoints, the evaluations,
    the config and the downloads; ``first``: the page's first paint, its charts, tiles
    and findings only (``ui.first_paint``)."""
    run_id = record.run_id
    live = data.is_active(record.status)

    @st.fragment(run_every=LOG_REFRESH_S if live else None)
    @ui.guarded
    def log_lines() -> None:
        text = data.run_log_tail(run_id, LOG_TAIL_BYTES)
        lines = text.splitlines()[-LOG_TAIL_LINES:]
        if lines:
            st.code("\n".join(lines), language="text")
        else:
            st.caption("Nothing logged yet: the process's stdout, stderr and warnings land here.")

    def log_tail() -> None:
        # Read, drawn and refreshed only while open: a closed expander's code block was
        # still re-highlighted by the browser on every refresh, and a fragment timer
        # rerunning for nothing cost a watching tab a re-render of the page every 5 s.
        with st.expander(
            f"Run log (last {LOG_TAIL_LINES} lines)", key=LOG_OPEN, on_change="rerun"
        ) as box:
            if box.open:
                log_lines()

    # The findings sit above the charts but are read after them: the charts are the
    # page's first content, and the browser loads and draws them meanwhile.
    findings_slot = st.empty()
    if names:
        ui.guarded(_charts)(run_id, names, options=options, evals=evals, live=live)
    else:
        st.info(data.no_metrics_message(record), icon=":material/hourglass_top:")
    with tiles_slot:
        _tiles(record, has_metrics=bool(names))
    with findings_slot.container():
        ui.guarded(findings_panel.show)(run_id, live=live)
    if first:
        ui.follow_up(ui.CHARTS_FOLLOW_UP_S)
        return
    log_tail()
    _checkpoints(run_id)
    evaluations.show([run_id])
    with st.expander("Config and run info"):
        st.code(
            json.dumps(
                {"config": record.config, "run_info": record.run_info}, indent=2, default=str
            ),
            language="json",
        )
    downloads(run_id)
    model_exports(run_id)


def _checkpoints(run_id: str) -> None:
    """The run's checkpoint files, each with a download button (read on click)."""
    files = data.checkpoints(run_id)
    with st.expander(f"Checkpoints ({len(files)})"):
        if files.empty:
            st.caption("None saved (training.checkpoint_every).")
            return
        for row in files.itertuples():
            path = Path(row.path)
            size = "missing" if pd.isna(row.size) else f"{row.size / 1e6:.1f} MB"
            name_col, button_col = st.columns([3, 1])
            name_col.markdown(f"step {row.step:,} · `{path.name}` · {size}")
            if not pd.isna(row.size):
                button_col.download_button(
                    "Download",
                    data=path.read_bytes,  # a callable: read when clicked, not every rerun
                    file_name=path.name,
                    mime="application/octet-stream",
                    key=f"run.checkpoint.{row.step}.{path.name}",
                )


def _charts(
    run_id: str, names: list[str], *, options: _Options, evals: tuple[str, ...], live: bool
) -> None:
    """The catalogue's training-step chart groups in their tabs (``CHART_SECTIONS``),
    lazily: only the open tab's charts are read and built; the first tab also has the
    evaluations. The open tab's charts are one element (``app.panels.live_charts``)
    that, while the run trains, polls this tab's live feed for what changed."""
    plan = training_charts.chart_plan(frozenset(names))
    drawn = {key for _, keys in plan for key in keys}
    plan = (*plan, *custom_metrics.custom_plan(names, drawn))
    order = (*CHART_SECTIONS, custom_metrics.SECTION)
    sections = [s for s in order if any(group.section == s for group, _ in plan)]
    tabs = st.tabs(sections, key=SECTION, on_change="rerun")
    opened = next((i for i, tab in enumerate(tabs) if tab.open), 0)
    request = ChartRequest(
        run_id,
        tuple((group, tuple(keys)) for group, keys in plan if group.section == sections[opened]),
        log_y=options.log_y,
        log_color=options.log_color,
        x=options.x,
        smoothing=options.smoothing,
        evals=evals if opened == 0 else None,
        live=live,
        evaluated_on=split_title(data.run(run_id)),
    )
    with tabs[opened]:
        if live:  # the feed this tab's element polls (the same one across page reruns)
            feed = live_feed.open_feed(request, st.session_state.get(FEED))
            st.session_state[FEED] = feed.token
            data.mark_watched(run_id)  # its tracker flushes more often while watched
        else:
            feed = live_feed.Feed(request)  # one read, nothing to poll
        drawn, seq = feed.current()
        live_charts.show(drawn, feed=feed if live else None, seq=seq, key=CHARTS)


ui.run_page(main)
