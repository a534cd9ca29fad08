"""Compare: metrics of several runs side by side, the SEC-paper table, a hyperparameter
view, the config diff, groups."""

from __future__ import annotations

from html import escape

import altair as alt
import pandas as pd
import streamlit as st

from app import data, ui
from app.charts.best_values import highlight_best
from app.charts.heatmap import norm_distribution_heatmap, norm_domain
from app.charts.line_charts import group_band_chart, has_band, metric_lines, run_color_scale
from app.charts.summary import hyperparameter_chart, small_multiples
from app.panels import (
    chart_libraries,
    evaluations,
    live_chart_wire,
    live_charts,
    live_feed,
    trust_marker,
)
from app.panels.chart_controls import chart_controls
from app.panels.run_picker import pick_many
from app.transforms import histogram_cells
from sphere_engine.catalogue import Source, find
from sphere_engine.catalogue.norm_histogram import PREFIX as HIST_PREFIX

#: Drawn when nothing is chosen: the loss, the norm variance and the main evaluation
#: metric (those logged).
DEFAULT_METRICS = ("loss/total", "norm/var", "eval: recall@1", "eval: classifier_accuracy")
MAX_HEATMAPS = 4
HEATMAP_POINTS = 20000  # cells per run: ~ 300 steps × the non-empty bins
EVAL_PREFIX = "eval: "


def main() -> None:
    st.title("Compare runs")
    warming = chart_libraries.start("compare.warm")
    # -- widgets ---------------------------------------------------------------------
    picked = pick_many("compare.runs", link_param="runs", sweep_key="compare.sweep")
    run_ids, labels, frame = picked.run_ids, picked.labels, picked.frame
    # -- empty state -----------------------------------------------------------------
    if not (labels and run_ids):  # no chart to come: nothing to load it for
        chart_libraries.done(warming)
    if not labels:
        ui.empty_state(
            "No runs to compare yet: launch a preset (it starts several runs), then come back."
        )
    if not run_ids:
        st.info("Choose two or more runs (or a sweep) to compare.", icon=":material/info:")
        st.stop()
    logged = data.metric_names(run_ids)
    histogram_keys = [n for n in logged if n.startswith(HIST_PREFIX)]
    names = [n for n in logged if not n.startswith(HIST_PREFIX)]  # drawn as a heatmap below
    eval_names = data.eval_names(run_ids)
    choices = [*names, *[f"{EVAL_PREFIX}{n}" for n in eval_names if n not in names]]
    if not choices:
        chart_libraries.done(warming)
        st.info("These runs have not logged any metric yet.", icon=":material/hourglass_top:")
        st.stop()
    if "compare.metrics" in st.session_state:
        chosen = [m for m in st.session_state["compare.metrics"] if m in choices]
    else:  # opened: the link's metrics
        chosen = [m for m in ui.query_ids("metrics") if m in choices]
    defaults = [m for m in DEFAULT_METRICS if m in choices][:3] or choices[:1]
    st.session_state["compare.metrics"] = chosen or defaults
    metrics = st.multiselect(
        "Metrics (several: small multiples with one run legend)",
        choices,
        key="compare.metrics",
        format_func=data.metric_choice_label,
    )
    linked = ui.query_ids("runs")
    if [r for r in linked if r in labels] == run_ids and len(linked) > len(run_ids):
        _link(metrics=metrics)  # a link naming unknown runs stays, with its warning
    else:
        _link(runs=run_ids, metrics=metrics)
    controls, _ = chart_controls("compare")
    smoothing, log_y, x_axis = controls.smoothing, controls.log_y, controls.x
    diff = data.config_diff(run_ids)
    group_keys = diff["key"].tolist() if "key" in diff else []
    group_by = st.selectbox(
        "Group by config key (mean ± std over the other keys, e.g. seeds)",
        ["", *group_keys],
        key="compare.group",
    )
    if group_by and x_axis == "clock":
        st.caption(
            "Runs do not share wall-clock times, so on the wall clock each run is drawn "
            "on its own; grouping applies on step and relative time."
        )
        group_by = ""
    # -- charts ----------------------------------------------------------------------
    color_labels = {r: labels.get(r, r) for r in run_ids}
    drawn = [
        _metric_chart(
            run_ids,
            metric,
            color_labels,
            smoothing=smoothing,
            x=x_axis,
            log_y=log_y,
            group_by=group_by,
        )
        for metric in metrics
    ]
    _show_linked(drawn, metrics, x_axis)
    chart_libraries.done(warming)
    if ui.first_paint("compare"):  # the metric charts first; the panels below follow
        ui.follow_up(ui.CHARTS_FOLLOW_UP_S)
        return
    if histogram_keys:
        _norm_distributions(run_ids, histogram_keys, color_labels, x=x_axis)
    _final_tables(run_ids, group_by, frame)
    evaluations.show(run_ids, color_labels)
    _hyperparameters(run_ids, group_keys)
    st.subheader("Config differences")
    if diff.empty:
        st.caption("The runs' configs are identical.")
    else:
        shown = diff.rename(columns={r: color_labels.get(r, r) for r in run_ids})
        st.dataframe(shown, hide_index=True, width="stretch")


def _show_linked(drawn: list[alt.TopLevelMixin], metrics: list[str], x: str) -> None:
    """The metric charts in the chart element of the Run page: zooming one zooms them
    all, and the zoom is kept in the URL (``?zoom=``). On the wall clock (dates, not
    numbers, in the rows) they are one Vega-Lite view of small multiples."""
    built = [live_chart_wire.drawn_chart(c, x, m) for c, m in zip(drawn, metrics, strict=True)]
    if x != "clock" and built and all(chart is not None for chart in built):
        notes = [f"{chart.title}: {chart.note}" for chart in built if chart and chart.note]
        live = live_feed.Drawn(
            tuple((f"compare:{i}", chart) for i, chart in enumerate(built) if chart),
            0,
            "",
            ("Points drawn of those logged: " + " · ".join(notes),) if notes else (),
        )
        live_charts.show(live, feed=None, key="compare.charts")
    elif len(drawn) == 1:
        ui.show_chart(drawn[0])
    elif drawn:
        ui.show_chart(small_multiples(drawn))


def _metric_chart(
    run_ids: list[str],
    metric: str,
    color_labels: dict[str, str],
    *,
    smoothing: float,
    x: str,
    log_y: bool,
    group_by: str,
) -> alt.TopLevelMixin:
    """One metric's chart: a line per run, or mean ± std per group; evaluation metrics
    get the same smoothing, grouping and x axis as the per-step ones."""
    evaluation = metric.startswith(EVAL_PREFIX)
    key = metric.removeprefix(EVAL_PREFIX)
    entry = find(key, Source.EVALUATION if evaluation else Source.TRAINING_BATCH)
    log = log_y and entry is not None and entry.log_scale
    title = data.metric_choice_label(metric)
    if group_by:
        if evaluation:
            stats = data.grouped_eval_series(run_ids, key, group_by, smoothing=smoothing, x=x)
            total = None
        else:
            stats, total = data.grouped_series(run_ids, key, group_by, smoothing=smoothing, x=x)
        return group_band_chart(
            stats,
            x=x,
            y_title=key,
            total=total,
            log_y=log,
            title=f"{key}: mean ± std by {group_by}",
        )
    if evaluation:
        series = data.eval_metric_series(run_ids, key, smoothing=smoothing, x=x)
        total = None
    else:
        series, totals = data.metric_series(run_ids, [key], smoothing=smoothing)
        total = data.points_total(totals)
    # Only the columns the chart draws: the run id, metric name and the other x axes
    # were more than half of the rows the browser receives and parses per chart.
    shown = [column for column in (x, "value", "min", "max") if column in series]
    series = series.assign(run=series["run_id"].map(color_labels))[[*shown, "run"]]
    return metric_lines(
        series,
        color="run",
        x=x,
        title=title,
        y_title=key,
        log_y=log,
        band=has_band(series),  # a downsampled bucket's spikes, not just its last value
        color_scale=run_color_scale(run_ids, color_labels),
        total=total,
        legend_title="run",
    )


def _norm_distributions(
    run_ids: list[str], keys: list[str], color_labels: dict[str, str], *, x: str
) -> None:
    """The norm histograms over steps, one heatmap per run, on one norm axis and one
    colour scale (at most ``MAX_HEATMAPS`` runs, in rows of two)."""
    st.subheader("Norm distribution over steps (training batch)")
    log_color = st.toggle(
        "Log colour scale (shows the distribution's thin tails)",
        value=False,
        key="compare.log_color",
    )
    shown = run_ids[:MAX_HEATMAPS]
    series, totals = data.metric_series(shown, keys, max_points=HEATMAP_POINTS * len(shown))
    cells = histogram_cells(series, x=x)
    if cells.empty:
        st.caption("No norm histogram logged yet.")
        return
    domain = norm_domain(cells)
    low, top = float(cells["fraction"].min()), float(cells["fraction"].max())
    for start in range(0, len(shown), 2):
        for column, run_id in zip(st.columns(2), shown[start : start + 2], strict=False):
            with column:
                ui.show_chart(
                    norm_distribution_heatmap(
                        cells[cells["run_id"] == run_id],
                        x=x,
                        norm_domain=domain,
                        fraction_max=top,
                        fraction_min=low,
                        log_color=log_color,
                        total=data.points_total(
                            {k: v for k, v in totals.items() if k[0] == run_id}
                        ),
                        title=color_labels.get(run_id, run_id),
                    )
                )
    if len(run_ids) > len(shown):
        st.caption(f"The first {MAX_HEATMAPS} of {len(run_ids)} runs.")


def _final_tables(run_ids: list[str], group_by: str, frame: pd.DataFrame) -> None:
    st.subheader("Final metrics")
    if group_by:
        st.dataframe(data.grouped_paper_table(run_ids, group_by), hide_index=True, width="stretch")
        st.caption(f"Mean ± std (number of runs) over the runs sharing each {group_by}.")
    table = data.paper_table(run_ids)
    distrusted = data.untrusted_runs(tuple(table["run_id"]))
    untrusted = table["run_id"].isin(distrusted)
    rank_all = bool(untrusted.any()) and st.toggle(
        "Rank untrusted runs too", key="compare.rank_untrusted",
        help="Runs with a critical finding (diverged, never learned, collapsed)",
    )  # fmt: skip
    statuses = table["run_id"].map(frame.set_index("run_id")["status"]).fillna("")
    marked = [trust_marker.status_text(s, u) for s, u in zip(statuses, untrusted, strict=True)]
    shown = table.drop(columns="run_id")
    shown.insert(1, "status", marked)
    st.dataframe(
        highlight_best(
            shown,
            data.paper_best(),
            exclude=None if rank_all else untrusted,
        ),
        hide_index=True,
        width="stretch",
    )
    for run, status, run_id in zip(shown["run"], statuses, table["run_id"], strict=True):
        why = trust_marker.reasons(data.findings(run_id)) if run_id in distrusted else []
        if why:  # the marker beside the status, with why (the table cell has no hover)
            st.markdown(
                f"{escape(str(run))}: {escape(status)}{trust_marker.marker_html(why)} "
                f"({escape('; '.join(why))})",
                unsafe_allow_html=True,
            )
    left_out = ""
    if untrusted.any() and not rank_all:
        names = ", ".join(table.loc[untrusted, "run"].astype(str))
        left_out = f" Not ranked (a critical finding: the result cannot be trusted): {names}."
    st.caption(
        "As in the SEC paper: NMI, F1, R@1 and MAP@R in %, and the norm variance of the "
        "test-set embeddings, all from the last evaluation. Best per column in bold." + left_out
    )
    st.download_button(
        "Download final metrics (CSV)",
        data.series_csv(table),
        file_name="spherescope-final-metrics.csv",
        mime="text/csv",
        key="compare.csv",
    )


def _hyperparameters(run_ids: list[str], keys: list[str]) -> None:
    """A final metric against a config key, with error bars over the other keys."""
    st.subheader("Final metric against a config key")
    if not keys:
        st.caption("The runs' configs are identical: there is no key to plot against.")
        return
    headers = list(data.paper_best())
    key_col, metric_col = st.columns(2)
    key = key_col.selectbox("Config key", keys, key="compare.hp_key")
    header = metric_col.selectbox("Final metric", headers, key="compare.hp_metric")
    stats = data.final_by_config(run_ids, key, header)
    if stats.empty:
        st.caption("No final values yet (they come from the last evaluation).")
        return
    # A short title: a wrapped one was read as "… ± stdover runs)"
    ui.show_chart(hyperparameter_chart(stats, key=key, y_title=header, title=header))
    st.caption(f"{header} against {key}: mean ± std over the runs sharing each value.")


def _link(**lists: list[str]) -> None:
    """Keep the chosen runs and metrics in the URL (``?runs=a,b&metrics=…``)."""
    for param, values in lists.items():
        value = ",".join(values)
        if st.query_params.get(param, "") != value:
            st.query_params[param] = value


ui.run_page(main)
