"""Run: one run's diagnostics, updating live while it trains."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from app import charts, data, ui
from app.panels import evaluations
from app.panels.downloads import downloads
from app.transforms import histogram_cells, time_at_steps
from sphere_engine.catalogue import (
    METRICS,
    ChartGroup,
    Source,
    chart_groups,
    find,
    group_keys,
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
#: redraw cheap (the charts are ~600 px wide); the finished run gets the full budget.
LIVE_SERIES_POINTS = 300
LOG_TAIL_BYTES, LOG_TAIL_LINES = 20_000, 200
LOG_REFRESH_S = 5.0  # a log is read, not watched: a slower refresh halves the reruns


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
    left, middle, right = st.columns([2, 2, 1])
    smoothing = middle.slider(
        "Smoothing (debiased EMA weight)", 0.0, 0.99, 0.0, 0.01, key="run.smoothing"
    )
    log_y = left.toggle(
        "Log scale for variance, CV, gradient norm and lr", value=True, key="run.log"
    )
    x_axis = right.radio(
        "x axis",
        ["step", "time"],
        horizontal=True,
        key="run.x",
        format_func=lambda v: "step" if v == "step" else "relative time",
    )
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
    _live(
        run_id,
        log_y=log_y,
        x=x_axis,
        smoothing=smoothing,
        evals=tuple(evals),
        live=data.is_active(record.status),
    )


def _sync_query_param() -> None:
    run_id = st.session_state.get("run.select")
    if run_id:
        st.query_params["run_id"] = run_id


def _live(
    run_id: str, *, log_y: bool, x: str, smoothing: float, evals: tuple[str, ...], live: bool
) -> None:
    @st.fragment(run_every=ui.LIVE_INTERVAL_S if live else None)
    @ui.guarded
    def panel() -> None:
        record = data.run(run_id)
        _header(record)
        if live and not data.is_active(record.status):
            st.rerun(scope="app")  # the run ended: render once more without polling
        names = data.metric_names([run_id])
        if not names:
            st.info(data.no_metrics_message(record), icon=":material/hourglass_top:")
            return
        clock = _charts(run_id, names, log_y=log_y, x=x, smoothing=smoothing, live=live)
        _evaluations(run_id, evals, x=x, clock=clock)

    @st.fragment(run_every=LOG_REFRESH_S if live else None)
    @ui.guarded
    def log_tail() -> None:
        text = data.run_log_tail(run_id, LOG_TAIL_BYTES)
        lines = text.splitlines()[-LOG_TAIL_LINES:]
        with st.expander(f"Run log (last {len(lines)} lines)", expanded=False):
            if lines:
                st.code("\n".join(lines), language="text")
            else:
                st.caption(
                    "Nothing logged yet: the process's stdout, stderr and warnings land here."
                )

    panel()
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
    run_id: str, names: list[str], *, log_y: bool, x: str, smoothing: float, live: bool
) -> pd.DataFrame:
    """The catalogue's training-step chart groups, two per row, each drawn when logged.

    Returns the run's clock (step, time of the drawn series) for charts of tables
    without wall times."""
    logged = set(names)
    groups = [
        (group, group_keys(group, logged))
        for group in chart_groups()
        if not group.requires or logged.intersection(group.requires)
    ]
    wanted = sorted({key for _, keys in groups for key in keys})
    per_series = LIVE_SERIES_POINTS if live else PER_SERIES_POINTS
    budget = per_series * max(len(wanted), 1)
    if live and smoothing == 0:  # only the points added since the last refresh
        series, totals = data.live_metric_series(run_id, wanted, max_points=budget)
    else:  # an EMA needs the whole series (see app.data.reads)
        series, totals = data.metric_series(
            [run_id], wanted, smoothing=smoothing, max_points=budget
        )
    logged_points = max(totals.values(), default=0)
    last_step = int(series["step"].max()) if len(series) else 0
    st.caption(f"{logged_points:,} points logged per metric, up to step {last_step:,}")
    # Each chart goes out as soon as it is built (the first appears while the others
    # are still being computed), two per row.
    row: list = []
    drawn = 0
    for group, keys in groups:
        chart = _chart(group, keys, run_id, series, totals, log_y=log_y, x=x, points=per_series)
        if chart is None:
            continue
        if drawn % 2 == 0:
            row = st.columns(2)
        with row[drawn % 2]:
            ui.show_chart(chart)
        drawn += 1
    return series[["run_id", "step", "time"]]


def _chart(
    group: ChartGroup,
    keys: list[str],
    run_id: str,
    series: pd.DataFrame,
    totals: data.Totals,
    *,
    log_y: bool,
    x: str,
    points: int,
) -> alt.TopLevelMixin | None:
    """One group's chart, or None when it has nothing to draw (``points``: steps per
    tracked sample)."""
    if group.kind == "sample_norms":
        norms, total = data.sample_norms(run_id, max_points=points)
        if norms.empty:
            return None
        if x == "time":
            norms = norms.assign(time=time_at_steps(norms.assign(run_id=run_id), series))
        return charts.sample_norm_chart(norms, x=x, total=total, title=group.title)
    part = series[series["name"].isin(keys)]
    total = data.points_total(totals, keys)
    if group.kind == "heatmap":
        cells = histogram_cells(part, x=x)
        if cells.empty:
            return None
        return charts.norm_distribution_heatmap(cells, x=x, total=total, title=group.title)
    if group.kind == "band":
        if "norm/mean" not in set(part["name"]):
            return None
        per_metric = total // max(part["name"].nunique(), 1)
        return charts.norm_band_chart(_band_frame(part), x=x, total=per_metric, title=group.title)
    if part.empty:
        return None
    return charts.metric_lines(
        part,
        x=x,
        title=group.title,
        total=total,
        log_y=log_y and group.log_scale,
        y_title=keys[0] if len(keys) == 1 and group.y_title == "value" else group.y_title,
        legend_title=group.legend_title,
    )


def _band_frame(part: pd.DataFrame) -> pd.DataFrame:
    wide = data.to_wide(part)
    renamed = {f"norm/{k}": k for k in ("mean", "std", "min", "max")}
    return wide.rename(columns=renamed)


def _evaluations(run_id: str, evals: tuple[str, ...], *, x: str, clock: pd.DataFrame) -> None:
    if not evals:  # nothing chosen: the paper's metrics, as soon as they are logged
        available = data.eval_names([run_id])
        evals = tuple(e for e in DEFAULT_EVALS if e in available)
    if not evals:
        st.caption("No evaluation yet (the first one runs at diagnostics.eval_every).")
        return
    frame = data.eval_series([run_id], list(evals))
    if frame.empty:
        st.caption("No evaluation yet (the first one runs at diagnostics.eval_every).")
        return
    if x == "time":
        frame = frame.assign(time=time_at_steps(frame, clock))
    ui.show_chart(
        charts.metric_lines(frame, x=x, title="Evaluation on the test split", legend_title="metric")
    )


ui.run_page(main)
