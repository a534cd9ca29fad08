"""Run: one run's diagnostics, updating live while it trains."""

from __future__ import annotations

import json
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from app import charts, data, ui
from app.panels import evaluations, linked_zoom, shared_charts, training_charts
from app.panels.downloads import downloads
from app.transforms import time_at_steps
from sphere_engine.catalogue import (
    CHART_SECTIONS,
    METRICS,
    ChartGroup,
    Source,
    find,
    key_metrics,
    label,
)

EVAL = Source.EVALUATION
#: Drawn by default in the evaluation chart: the catalogue's key metrics in [0, 1].
DEFAULT_EVALS = tuple(k for k in key_metrics() if (m := find(k, EVAL)) and m.unit == "fraction")
#: Offered in the evaluation picker before the run has evaluated (a multiselect with no
#: options is disabled, and the picker is drawn once, not on every live refresh).
EVAL_KEYS = tuple(m.key for m in METRICS if EVAL in m.sources and not m.is_family)
PER_SERIES_POINTS = 1000
#: While the run trains the page redraws every 2 s: fewer points per series keep each
#: redraw cheap (the charts are ~600 px wide, and each bucket keeps its min and max);
#: the finished run gets the full budget. 75 instead of 300: the browser's time per
#: refresh is mostly Vega re-evaluating every row of every chart (150 → 75 cut the
#: browser's time per refresh by about a fifth, the server's by a tenth).
LIVE_SERIES_POINTS = 75
#: The live charts poll this often (seconds). With the run's tracker flushing every
#: 0.25 s while watched (``data.mark_watched``), a step is drawn about a second after it
#: is logged. A lag-for-CPU trade: Streamlit re-renders every element of a fragment
#: run, so a poll costs the browser about as much with or without new points. With the
#: lazy tabs (four charts open) bench/dashboard_speed on the quiet machine, 2 tabs:
#: 1.25 s gave watched/unwatched 0.68/0.73 and lag p90 1.68/1.55 s; 1.5 s 0.80/0.76 and
#: 1.55/1.55 s; 1.75 s 0.83/0.79/0.78 and 1.92/2.02/1.79 s; 2 s 0.79 and 2.03 s.
LIVE_CHARTS_S = 1.5
LOG_TAIL_BYTES, LOG_TAIL_LINES = 20_000, 200
LOG_REFRESH_S = 5.0  # a log is read, not watched: a slower refresh halves the reruns
LOG_OPEN = "run.log_open"  # the log expander's state (open: read and draw the tail)
#: Charts of a page opened afresh (``ui.first_paint``): its first row; the rest, the
#: evaluations and the panels below follow in the next script run.
FIRST_PAINT_CHARTS = 2
#: A tab's last drawn charts: (key, training charts, evaluation chart).
HELD_CHARTS = "run.held_charts"
#: The open tab of charts (``catalogue.CHART_SECTIONS``).
SECTION = "run.section"


@dataclass(frozen=True)
class _Options:
    """The chart controls (hashable: part of the key of a tab's held charts)."""

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
    """The charts (live: refreshed every ``LIVE_CHARTS_S``), then the log, the
    checkpoints, the evaluations, the config and the downloads; ``first``: the page's
    first paint, its first row of charts only (``ui.first_paint``)."""

    @st.fragment(run_every=LIVE_CHARTS_S if live else None)
    @ui.guarded
    def panel() -> None:
        record = data.run(run_id)
        if live and not data.is_active(record.status):
            # The run ended: render once more without polling, before the header says
            # so (a page never shows "finished" above the live charts' last counts).
            st.rerun(scope="app")
        if live:
            data.mark_watched(run_id)  # its tracker flushes more often while watched
        _header(record)
        names = data.metric_names([run_id])
        if not names:
            st.info(data.no_metrics_message(record), icon=":material/hourglass_top:")
            return
        _charts(
            run_id,
            names,
            options=options,
            evals=evals,
            live=live,
            limit=FIRST_PAINT_CHARTS if first else None,
        )

    @st.fragment(run_every=LOG_REFRESH_S if live else None)
    @ui.guarded
    def log_tail() -> None:
        # Read and drawn only while open: a closed expander's code block was still
        # re-highlighted by the browser on every refresh (~4 % of a watching tab's time).
        with st.expander(
            f"Run log (last {LOG_TAIL_LINES} lines)", key=LOG_OPEN, on_change="rerun"
        ) as box:
            if not box.open:
                return
            text = data.run_log_tail(run_id, LOG_TAIL_BYTES)
            lines = text.splitlines()[-LOG_TAIL_LINES:]
            if lines:
                st.code("\n".join(lines), language="text")
            else:
                st.caption(
                    "Nothing logged yet: the process's stdout, stderr and warnings land here."
                )

    panel()
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


def _charts(
    run_id: str,
    names: list[str],
    *,
    options: _Options,
    evals: tuple[str, ...],
    live: bool,
    limit: int | None = None,
) -> None:
    """The catalogue's training-step chart groups in their tabs (``CHART_SECTIONS``),
    lazily: only the open tab's charts are read, built and sent (a refresh of sixteen
    charts cost the browser ~20 % of a core per watching tab); the first tab also has
    the evaluations. ``limit``: only the first ``limit`` charts (a first paint)."""
    plan = training_charts.chart_plan(frozenset(names))
    sections = [s for s in CHART_SECTIONS if any(group.section == s for group, _ in plan)]
    tabs = st.tabs(sections, key=SECTION, on_change="rerun")
    opened = next((i for i, tab in enumerate(tabs) if tab.open), 0)
    with tabs[opened]:
        _section_charts(
            run_id,
            [(group, keys) for group, keys in plan if group.section == sections[opened]],
            options=options,
            evals=evals if opened == 0 else None,
            live=live,
            limit=limit,
        )


def _section_charts(
    run_id: str,
    groups: list[tuple[ChartGroup, list[str]]],
    *,
    options: _Options,
    evals: tuple[str, ...] | None,
    live: bool,
    limit: int | None,
) -> None:
    """One tab's charts, two per row, then the evaluations (``evals`` None: a tab
    without them; ``limit``: only the first ``limit`` charts, nothing held).

    While the run trains, the charts a tab computed are kept (``st.session_state``)
    until the run logs a new step: a refresh without one sends the same specs and rows
    again, which costs the server a read of nothing and Vega no new dataset (the bytes
    are the same), though Streamlit's frontend still renders every element again and
    re-lays out each view. Charts built for one tab serve every tab that would build
    the same (``shared_charts``)."""
    wanted = sorted({key for _, keys in groups for key in keys})
    per_series = LIVE_SERIES_POINTS if live else PER_SERIES_POINTS
    budget = per_series * max(len(wanted), 1)
    if live and options.smoothing == 0:  # only the points added since the last refresh
        series, totals = data.live_metric_series(run_id, wanted, max_points=budget)
    else:  # an EMA needs the whole series (see app.data.reads)
        series, totals = data.metric_series(
            [run_id], wanted, smoothing=options.smoothing, max_points=budget
        )
    logged_points = max(totals.values(), default=0)
    last_step = int(series["step"].max()) if len(series) else 0
    st.caption(f"{logged_points:,} points logged per metric, up to step {last_step:,}")
    # Options as a plain tuple: the page script runs afresh per session, so its
    # ``_Options`` class (and any instance's equality) is not shared between tabs. No
    # points count: a tab's count is its own running sum (it can differ between tabs
    # by a few points), while the last step names the rows drawn.
    key = (run_id, last_step, tuple(wanted), astuple(options), evals, live)
    linked_zoom.reset_button(options.x)
    held = st.session_state.get(HELD_CHARTS)
    if held is None or held[0] != key:
        built = shared_charts.get(key)
        held = None if built is None else (key, *built)
    place = _Grid(options.x)
    if held is not None:
        drawn, evaluation = held[1], held[2]
        for name, chart in drawn[:limit]:  # a first paint draws its first row only
            place(name, chart)
        if limit is not None:
            training_charts.points_caption([chart for _, chart in drawn[:limit]])
            return
        st.session_state[HELD_CHARTS] = held
    else:
        drawn = []
        for group, keys in groups:
            if limit is not None and len(drawn) >= limit:
                training_charts.points_caption([chart for _, chart in drawn])
                return
            chart = training_charts.group_chart(
                group,
                keys,
                run_id,
                series,
                totals,
                log_y=options.log_y,
                log_color=options.log_color,
                x=options.x,
                points=per_series,
            )
            if chart is not None:  # each chart goes out as soon as it is built
                place(group.id, chart)
                drawn.append((group.id, chart))
        evaluation = (
            None if evals is None else _evaluation(run_id, evals, x=options.x, clock=series)
        )
        st.session_state[HELD_CHARTS] = (key, drawn, evaluation)
        shared_charts.put(key, (drawn, evaluation))
    if evaluation is not None:
        training_charts.show(evaluation, "evaluation", options.x)
    elif evals is not None:
        st.caption("No evaluation yet (the first one runs at diagnostics.eval_every).")
    training_charts.points_caption([chart for _, chart in drawn])


class _Grid:
    """Draws charts two per row, their x zoom linked."""

    def __init__(self, axis: str) -> None:
        self.axis = axis
        self.drawn = 0
        self.row: list = []

    def __call__(self, name: str, chart: training_charts.LiveChart) -> None:
        if self.drawn % 2 == 0:
            self.row = st.columns(2)
        with self.row[self.drawn % 2]:
            training_charts.show(chart, name, self.axis)
        self.drawn += 1


def _evaluation(
    run_id: str, evals: tuple[str, ...], *, x: str, clock: pd.DataFrame
) -> training_charts.LiveChart | None:
    if not evals:  # nothing chosen: the paper's metrics, as soon as they are logged
        available = data.eval_names([run_id])
        evals = tuple(e for e in DEFAULT_EVALS if e in available)
    if not evals:
        return None
    frame = data.eval_series([run_id], list(evals))
    if frame.empty:
        return None
    if x != "step":
        frame = frame.assign(**{x: time_at_steps(frame, clock, x)})
    return training_charts.lines(
        frame,
        x=x,
        title="Evaluation on the test split",
        total=None,
        log_y=False,
        legend_title="metric",
    )


ui.run_page(main)
