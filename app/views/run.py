"""Run: one run's diagnostics, updating live while it trains."""

from __future__ import annotations

import json
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from app import charts, data, ui
from app.panels.downloads import downloads
from sphere_engine.catalogue import (
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
PER_SERIES_POINTS = 1000


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
    left, right = st.columns(2)
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
    eval_choices = data.eval_names([run_id])
    evals = st.multiselect(
        "Evaluation metrics on the test set (empty: the key metrics)",
        eval_choices,
        key="run.evals",
        default=[e for e in DEFAULT_EVALS if e in eval_choices],
        format_func=lambda key: label(key, EVAL),
    )
    record = data.run(run_id)
    # -- charts (live while the run is active) ---------------------------------------
    _live(run_id, log_y=log_y, x=x_axis, evals=tuple(evals), live=data.is_active(record.status))


def _sync_query_param() -> None:
    run_id = st.session_state.get("run.select")
    if run_id:
        st.query_params["run_id"] = run_id


def _live(run_id: str, *, log_y: bool, x: str, evals: tuple[str, ...], live: bool) -> None:
    @st.fragment(run_every=ui.LIVE_INTERVAL_S if live else None)
    @ui.guarded
    def panel() -> None:
        record = data.run(run_id)
        _header(record)
        if live and not data.is_active(record.status):
            st.rerun(scope="app")  # the run ended: render once more without polling
        names = data.metric_names([run_id])
        if not names:
            st.info(
                "No metrics recorded yet. A queued run starts when a worker is free; "
                "the first points appear a few seconds after it starts.",
                icon=":material/hourglass_top:",
            )
            return
        _charts(run_id, names, log_y=log_y, x=x)
        _evaluations(run_id, evals, x=x)

    panel()
    record = data.run(run_id)
    with st.expander("Config and run info"):
        st.code(
            json.dumps(
                {"config": record.config, "run_info": record.run_info}, indent=2, default=str
            ),
            language="json",
        )
    downloads(run_id)


def _header(record: Any) -> None:
    status_col, progress_col, elapsed_col, device_col = st.columns([1, 2, 1, 1])
    status_col.metric("Status", record.status)
    step, total = record.progress_step, record.progress_total
    fraction = data.progress_fraction(step, total)
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


def _charts(run_id: str, names: list[str], *, log_y: bool, x: str) -> None:
    """The catalogue's training-step chart groups, two per row, each drawn when logged."""
    logged = set(names)
    groups = [
        (group, group_keys(group, logged))
        for group in chart_groups()
        if not group.requires or logged.intersection(group.requires)
    ]
    wanted = sorted({key for _, keys in groups for key in keys})
    series, totals = data.metric_series(
        [run_id], wanted, max_points=PER_SERIES_POINTS * max(len(wanted), 1)
    )
    logged_points = max(totals.values(), default=0)
    last_step = int(series["step"].max()) if len(series) else 0
    st.caption(f"{logged_points:,} points logged per metric, up to step {last_step:,}")
    drawn = [
        chart
        for group, keys in groups
        if (chart := _chart(group, keys, run_id, series, totals, log_y=log_y, x=x)) is not None
    ]
    for start in range(0, len(drawn), 2):
        for column, chart in zip(st.columns(2), drawn[start : start + 2], strict=False):
            with column:
                ui.show_chart(chart)


def _chart(
    group: ChartGroup,
    keys: list[str],
    run_id: str,
    series: pd.DataFrame,
    totals: data.Totals,
    *,
    log_y: bool,
    x: str,
) -> alt.TopLevelMixin | None:
    """One group's chart, or None when it has nothing to draw."""
    if group.kind == "sample_norms":
        norms, total = data.sample_norms(run_id)
        return (
            charts.sample_norm_chart(norms, total=total, title=group.title) if len(norms) else None
        )
    part = series[series["name"].isin(keys)]
    total = data.points_total(totals, keys)
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


def _evaluations(run_id: str, evals: tuple[str, ...], *, x: str) -> None:
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
    ui.show_chart(
        charts.metric_lines(
            frame, x="step", title="Evaluation on the test split", legend_title="metric"
        )
    )


ui.run_page(main)
