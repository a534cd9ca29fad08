"""Run: one run's diagnostics, updating live while it trains."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from app import charts, data, ui
from app.panels import evaluations, live_charts, live_feed, slurm_job, training_charts
from app.panels import findings as findings_panel
from app.panels.downloads import downloads
from app.panels.live_feed import DEFAULT_EVALS, EVAL, EVAL_KEYS, ChartRequest
from sphere_engine.catalogue import CHART_SECTIONS, label

#: While the run trains the header (status, progress, elapsed) is redrawn this often;
#: the charts update on their own (``app.panels.live_charts``, every ``POLL_S``).
HEADER_S = 5.0
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
    # -- widgets ---------------------------------------------------------------------
    frame = data.runs()
    labels = data.run_labels(frame) if not frame.empty else {}
    options = list(labels)
    wanted = ui.query_param("run_id")
    if wanted and wanted not in labels:
        st.warning(f"No run with id `{wanted}`; pick one below.", icon=":material/warning:")
    default = wanted if wanted in labels else next(iter(data.preferred_runs(frame)), None)
    index = options.index(default) if default in labels else 0
    run_id = st.selectbox(
        "Run",
        options,
        index=index if options else None,
        key="run.select",
        format_func=lambda r: labels.get(r, r),
        on_change=_sync_query_param,
    )
    left, middle, right = st.columns([2, 2, 2])
    smoothing = middle.slider(
        "Smoothing (debiased EMA weight)", 0.0, 0.99, 0.0, 0.01, key="run.smoothing"
    )
    log_y = left.toggle(
        "Log scale for variance, CV, gradient norm and lr", value=True, key="run.log"
    )
    log_color = left.toggle(
        "Log colour scale for the norm distribution (shows its thin tails)",
        value=False,
        key="run.log_color",
    )
    x_axis = right.radio(
        "x axis",
        list(charts.X_AXES),
        horizontal=True,
        key="run.x",
        format_func=charts.X_LABELS.get,
    )
    options = _Options(log_y, log_color, x_axis, smoothing)
    # -- empty state -----------------------------------------------------------------
    if not run_id:
        ui.empty_state("No runs yet: launch one, then watch its norms here live.")
    logged_evals = data.eval_names([run_id])
    eval_choices = [*EVAL_KEYS, *[e for e in logged_evals if e not in EVAL_KEYS]]
    evals = st.multiselect(
        "Evaluation metrics on the test set (empty: the key metrics)",
        eval_choices,
        key="run.evals",
        default=[e for e in DEFAULT_EVALS if e in logged_evals],
        format_func=lambda key: label(key, EVAL),
    )
    record = data.run(run_id)
    # -- charts (live while the run is active) ---------------------------------------
    first = ui.first_paint("run")
    _live(run_id, options, evals=tuple(evals), live=data.is_active(record.status), first=first)


def _sync_query_param() -> None:
    run_id = st.session_state.get("run.select")
    if run_id:
        st.query_params["run_id"] = run_id


def _live(
    run_id: str, options: _Options, *, evals: tuple[str, ...], live: bool, first: bool
) -> None:
    """The header and the charts (live while the run trains), then the log, the
    checkpoints, the evaluations, the config and the downloads; ``first``: the page's
    first paint, its header and charts only (``ui.first_paint``)."""
    names = data.metric_names([run_id])

    @st.fragment(run_every=HEADER_S if live else None)
    @ui.guarded
    def header() -> None:
        record = data.run(run_id)
        ended = not data.is_active(record.status)
        if live and (ended or (not names and data.metric_names([run_id]))):
            # The run ended, or logged its first values: draw the page anew (its
            # charts, or the finished run without polling).
            st.rerun(scope="app")
        _header(record)

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

    header()
    ui.guarded(findings_panel.show)(run_id, live=live)
    if names:
        ui.guarded(_charts)(run_id, names, options=options, evals=evals, live=live)
    else:
        st.info(data.no_metrics_message(data.run(run_id)), icon=":material/hourglass_top:")
    if first:
        ui.follow_up()
        return
    log_tail()
    _checkpoints(run_id)
    evaluations.show([run_id])
    record = data.run(run_id)
    with st.expander("Config and run info"):
        st.code(
            json.dumps(
                {"config": record.config, "run_info": record.run_info}, indent=2, default=str
            ),
            language="json",
        )
    downloads(run_id)


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


def _header(record: Any) -> None:
    status_col, progress_col, elapsed_col, device_col = st.columns([1, 2, 1, 1])
    status_col.metric("Status", record.status)
    step, total = record.progress_step, record.progress_total
    fraction = data.run_progress(record.status, step, total)
    progress_col.progress(fraction, text=f"step {step or 0} of {total or '?'}")
    elapsed_col.metric("Elapsed", ui.format_seconds(data.elapsed_seconds(record)))
    device_col.metric("Device", record.device or "–")
    if record.status in ("failed", "lost"):
        st.error(
            f"The run {record.status}: {record.status_message or 'no message recorded'}",
            icon=":material/error:",
        )
    elif record.status_message:
        st.caption(record.status_message)
    slurm_job.show(record)


def _charts(
    run_id: str, names: list[str], *, options: _Options, evals: tuple[str, ...], live: bool
) -> None:
    """The catalogue's training-step chart groups in their tabs (``CHART_SECTIONS``),
    lazily: only the open tab's charts are read and built; the first tab also has the
    evaluations. The open tab's charts are one element (``app.panels.live_charts``)
    that, while the run trains, polls this tab's live feed for what changed."""
    plan = training_charts.chart_plan(frozenset(names))
    sections = [s for s in CHART_SECTIONS if any(group.section == s for group, _ in plan)]
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
    )
    with tabs[opened]:
        if live:  # the feed this tab's element polls (the same one across page reruns)
            feed = live_feed.open_feed(request, st.session_state.get(FEED))
            st.session_state[FEED] = feed.token
            data.mark_watched(run_id)  # its tracker flushes more often while watched
        else:
            feed = live_feed.Feed(request)  # one read, nothing to poll
        live_charts.show(feed.current(), feed=feed if live else None, key=CHARTS)


ui.run_page(main)
