"""Compare: overlay a metric over runs, the SEC-paper table, the config diff, groups."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import charts, data, ui
from app.panels import evaluations

DEFAULT_METRIC = "norm/var"


def main() -> None:
    st.title("Compare runs")
    # -- widgets ---------------------------------------------------------------------
    frame = data.runs()
    labels = data.run_labels(frame) if not frame.empty else {}
    ui.warn_unknown_runs(ui.query_ids("runs"), labels)  # issue 14, bug 13
    sweep_ids = data.sweeps()
    st.selectbox(
        "Sweep (selects its runs)",
        ["", *sweep_ids],
        key="compare.sweep",
        on_change=_select_sweep,
        args=(frame,),
    )
    if "compare.runs" not in st.session_state:
        st.session_state["compare.runs"] = _preselection(frame, labels)
    else:  # drop runs deleted since they were chosen
        st.session_state["compare.runs"] = [
            r for r in st.session_state["compare.runs"] if r in labels
        ]
    run_ids = st.multiselect(
        "Runs", list(labels), key="compare.runs", format_func=lambda r: labels.get(r, r)
    )
    # -- empty state -----------------------------------------------------------------
    if not labels:
        ui.empty_state(
            "No runs to compare yet: launch a preset (it starts several runs), then come back."
        )
    if not run_ids:
        st.info("Choose two or more runs (or a sweep) to compare.", icon=":material/info:")
        st.stop()
    names = data.metric_names(run_ids)
    eval_names = data.eval_names(run_ids)
    metric_col, smooth_col, x_col = st.columns([2, 2, 1])
    choices = [*names, *[f"eval: {n}" for n in eval_names if n not in names]]
    if not choices:
        st.info("These runs have not logged any metric yet.", icon=":material/hourglass_top:")
        st.stop()
    default = choices.index(DEFAULT_METRIC) if DEFAULT_METRIC in choices else 0
    metric = metric_col.selectbox(
        "Metric", choices, index=default, key="compare.metric", format_func=data.metric_choice_label
    )
    smoothing = smooth_col.slider(
        "Smoothing (debiased EMA weight)", 0.0, 0.99, 0.0, 0.01, key="compare.smoothing"
    )
    x_axis = x_col.radio(
        "x axis",
        ["step", "time"],
        key="compare.x",
        format_func=lambda v: "step" if v == "step" else "relative time",
    )
    diff = data.config_diff(run_ids)
    group_keys = diff["key"].tolist() if "key" in diff else []
    group_by = st.selectbox(
        "Group by config key (mean ± std over the other keys, e.g. seeds)",
        ["", *group_keys],
        key="compare.group",
    )
    # -- data ------------------------------------------------------------------------
    color_labels = {r: labels.get(r, r) for r in run_ids}
    scale = charts.run_color_scale(run_ids, color_labels)
    # -- charts ----------------------------------------------------------------------
    if metric.startswith("eval: "):
        series = data.eval_series(run_ids, [metric.removeprefix("eval: ")])
        series = series.assign(run=series["run_id"].map(color_labels))
        ui.show_chart(
            charts.metric_lines(
                series, color="run", title=metric, color_scale=scale, legend_title="run"
            )
        )
    elif group_by:
        stats, total = data.grouped_series(run_ids, metric, group_by, smoothing=smoothing, x=x_axis)
        ui.show_chart(
            charts.group_band_chart(
                stats,
                x=x_axis,
                y_title=metric,
                total=total,
                title=f"{metric}: mean ± std by {group_by}",
            )
        )
    else:
        series, totals = data.metric_series(run_ids, [metric], smoothing=smoothing)
        series = series.assign(run=series["run_id"].map(color_labels))
        ui.show_chart(
            charts.metric_lines(
                series,
                color="run",
                x=x_axis,
                title=metric,
                y_title=metric,
                color_scale=scale,
                total=data.points_total(totals),
                legend_title="run",
            )
        )
    st.subheader("Final metrics")
    table = data.paper_table(run_ids)
    st.dataframe(
        charts.highlight_best(table.drop(columns="run_id"), data.paper_best()),
        hide_index=True,
        width="stretch",
    )
    st.caption(
        "As in the SEC paper: NMI, F1, R@1 and MAP@R in %, and the norm variance of the "
        "test-set embeddings, all from the last evaluation. Best per column in bold."
    )
    st.download_button(
        "Download final metrics (CSV)",
        data.series_csv(table),
        file_name="spherescope-final-metrics.csv",
        mime="text/csv",
        key="compare.csv",
    )
    evaluations.show(run_ids, color_labels)
    st.subheader("Config differences")
    if diff.empty:
        st.caption("The runs' configs are identical.")
    else:
        shown = diff.rename(columns={r: color_labels.get(r, r) for r in run_ids})
        st.dataframe(shown, hide_index=True, width="stretch")


def _select_sweep(frame: pd.DataFrame) -> None:
    sweep = st.session_state.get("compare.sweep")
    if sweep:
        st.session_state["compare.runs"] = frame.loc[frame["sweep_id"] == sweep, "run_id"].tolist()


def _preselection(frame: pd.DataFrame, labels: dict[str, str]) -> list[str]:
    """The runs named in the URL (?runs=a,b), else the two newest with results."""
    wanted = ui.query_param("runs")
    if wanted:
        return [r for r in wanted.split(",") if r in labels]
    return data.preferred_runs(frame, 2)


ui.run_page(main)
