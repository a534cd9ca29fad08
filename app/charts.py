"""Altair chart builders: pure functions DataFrame → chart, testable without a browser.

Every builder caps the rows it embeds at ``MAX_POINTS`` (downsampling per series on a
shared x grid) and, when it had to drop points or was handed already-downsampled
data, records "N of M points" in the chart's ``usermeta["points_note"]``; the pages
show that note as a caption under the chart (``app.ui.show_chart``).
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from app import transforms

MAX_POINTS = 5000
#: Categorical palette for runs and classes; the domain (sorted run ids) fixes each run's
#: colour. Every colour is saturated enough to read as a thin line on white (no pastel
#: second half: class 9 and a second metric must not fade into the background).
RUN_PALETTE = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    "#393b79", "#e6550d", "#31a354", "#843c39", "#7b4173",
    "#3182bd", "#8c6d31", "#637939", "#636363", "#a55194",
]  # fmt: skip
#: Classes (scatter plots) and metrics share the runs' palette.
CATEGORY_SCALE = alt.Scale(range=RUN_PALETTE)
CHART_HEIGHT = 260


# ----------------------------------------------------------------------------- helpers


def points_note(shown: int, total: int | None) -> str | None:
    """ "N of M points" when fewer points are shown than were recorded, else None."""
    if total is None or shown >= total:
        return None
    return f"{shown:,} of {total:,} points"


def run_color_scale(run_ids: Sequence[str], labels: dict[str, str] | None = None) -> alt.Scale:
    """A colour scale whose domain is the sorted run ids (or their labels in that order).

    The same run gets the same colour on every chart of a page, whatever the metric.
    """
    ordered = sorted(set(run_ids))
    domain = [labels.get(r, r) for r in ordered] if labels else ordered
    palette = [RUN_PALETTE[i % len(RUN_PALETTE)] for i in range(len(domain))]
    return alt.Scale(domain=domain, range=palette)


def run_colors(run_ids: Sequence[str]) -> dict[str, str]:
    """run_id → hex colour, the mapping ``run_color_scale`` produces."""
    ordered = sorted(set(run_ids))
    return {r: RUN_PALETTE[i % len(RUN_PALETTE)] for i, r in enumerate(ordered)}


def _limit(
    df: pd.DataFrame, by: Sequence[str], x: str, total: int | None, max_points: int = MAX_POINTS
) -> tuple[pd.DataFrame, str | None]:
    recorded = max(total or 0, len(df))
    limited = transforms.cap_total_points(df, max_points, by=by, x=x) if by else df
    if len(limited) > max_points:  # no series structure: sample rows evenly
        idx = np.linspace(0, len(limited) - 1, max_points).astype(int)
        limited = limited.iloc[np.unique(idx)]
    return limited, points_note(len(limited), recorded)


def _finish(chart: alt.TopLevelMixin, note: str | None, title: str | None) -> alt.TopLevelMixin:
    props: dict = {"usermeta": {"points_note": note}}
    if title:
        props["title"] = alt.TitleParams(title, anchor="start")
    return chart.properties(**props)


def _x_encoding(x: str) -> alt.X:
    title = "seconds since start" if x == "time" else x
    return alt.X(f"{x}:Q", title=title)


def _y_scale(log_y: bool) -> alt.Scale:
    return alt.Scale(type="log") if log_y else alt.Scale(zero=False)


def _positive(df: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """Rows where every column is > 0 (a log axis cannot show the others)."""
    mask = np.ones(len(df), dtype=bool)
    for column in columns:
        if column in df:
            mask &= pd.to_numeric(df[column], errors="coerce").to_numpy() > 0
    return df[mask]


# ----------------------------------------------------------------------------- series


def metric_lines(
    df: pd.DataFrame,
    *,
    color: str = "name",
    x: str = "step",
    title: str | None = None,
    y_title: str = "value",
    log_y: bool = False,
    band: bool = False,
    total: int | None = None,
    color_scale: alt.Scale | None = None,
    legend_title: str | None = None,
) -> alt.TopLevelMixin:
    """Lines of ``value`` over ``x``, one per ``color`` category.

    ``df`` has columns ``x``, value, ``color`` (and min/max for ``band=True``: a shaded
    min–max band behind each line). ``total`` is the number of recorded points the
    frame stands for (for the "N of M points" note).
    """
    frame = df.copy()
    if log_y:
        frame = _positive(frame, ["value", "min", "max"] if band else ["value"])
    frame, note = _limit(frame, [color], x, total)
    color_enc = alt.Color(
        f"{color}:N",
        scale=color_scale or CATEGORY_SCALE,
        title=legend_title or color,
        # one series needs no legend: the chart's title names it
        legend=alt.Legend(orient="bottom", labelLimit=260) if frame[color].nunique() > 1 else None,
    )
    base = alt.Chart(frame).encode(x=_x_encoding(x))
    line = base.mark_line(interpolate="linear").encode(
        y=alt.Y("value:Q", title=y_title, scale=_y_scale(log_y)),
        color=color_enc,
        tooltip=[
            alt.Tooltip(f"{color}:N"),
            alt.Tooltip(f"{x}:Q"),
            alt.Tooltip("value:Q", format=".5g"),
        ],
    )
    chart: alt.TopLevelMixin = line
    if band and {"min", "max"} <= set(frame.columns):
        area = base.mark_area(opacity=0.18).encode(
            y=alt.Y("min:Q", scale=_y_scale(log_y)), y2="max:Q", color=color_enc
        )
        chart = alt.layer(area, line)
    return _finish(chart.properties(height=CHART_HEIGHT), note, title)


def norm_band_chart(
    wide: pd.DataFrame,
    *,
    x: str = "step",
    total: int | None = None,
    title: str = "Embedding norm: mean, ± std, min–max",
) -> alt.TopLevelMixin:
    """Mean norm with a ± std band and a min–max band.

    ``wide`` has ``x`` and the columns mean, std, min, max (one row per logged step).
    """
    frame = wide.copy()
    for column in ("std", "min", "max"):
        if column not in frame:
            frame[column] = np.nan
    frame["lower"] = frame["mean"] - frame["std"].fillna(0.0)
    frame["upper"] = frame["mean"] + frame["std"].fillna(0.0)
    frame = frame.assign(series="norm", value=frame["mean"])
    frame, note = _limit(frame, ["series"], x, total)
    base = alt.Chart(frame).encode(x=_x_encoding(x))
    minmax = base.mark_area(opacity=0.15, color="#1f77b4").encode(
        y=alt.Y("min:Q", title="‖f‖", scale=alt.Scale(zero=False)), y2="max:Q"
    )
    std = base.mark_area(opacity=0.35, color="#1f77b4").encode(y="lower:Q", y2="upper:Q")
    mean = base.mark_line(color="#1f77b4").encode(
        y="mean:Q",
        tooltip=[
            alt.Tooltip(f"{x}:Q"),
            alt.Tooltip("mean:Q", format=".4g"),
            alt.Tooltip("std:Q", format=".4g"),
            alt.Tooltip("min:Q", format=".4g"),
            alt.Tooltip("max:Q", format=".4g"),
        ],
    )
    return _finish(alt.layer(minmax, std, mean).properties(height=CHART_HEIGHT), note, title)


def sample_norm_chart(
    df: pd.DataFrame, *, total: int | None = None, title: str = "Tracked-sample norm trajectories"
) -> alt.TopLevelMixin:
    """One thin line per tracked training sample: ``df`` has step, sample, norm."""
    frame, note = _limit(df, ["sample"], "step", total)
    chart = (
        alt.Chart(frame)
        .mark_line(strokeWidth=1, opacity=0.7)
        .encode(
            x=alt.X("step:Q"),
            y=alt.Y("norm:Q", title="‖f‖", scale=alt.Scale(zero=False)),
            color=alt.Color("sample:N", legend=None),
            tooltip=["sample:N", "step:Q", alt.Tooltip("norm:Q", format=".4g")],
        )
    )
    return _finish(chart.properties(height=CHART_HEIGHT), note, title)


def group_band_chart(
    stats: pd.DataFrame,
    *,
    x: str = "step",
    title: str | None = None,
    y_title: str = "value",
    total: int | None = None,
) -> alt.TopLevelMixin:
    """Mean line with a ± std band per group (``transforms.group_mean_std`` output)."""
    frame, note = _limit(stats, ["group"], x, total)
    base = alt.Chart(frame).encode(
        x=_x_encoding(x), color=alt.Color("group:N", legend=alt.Legend(orient="bottom"))
    )
    band = base.mark_area(opacity=0.2).encode(y=alt.Y("lower:Q", title=y_title), y2="upper:Q")
    line = base.mark_line().encode(
        y="mean:Q",
        tooltip=[
            "group:N",
            f"{x}:Q",
            alt.Tooltip("mean:Q", format=".5g"),
            alt.Tooltip("std:Q", format=".3g"),
            "runs:Q",
        ],
    )
    return _finish(alt.layer(band, line).properties(height=CHART_HEIGHT), note, title)


# ----------------------------------------------------------------------------- geometry


def norm_histogram(
    norms: pd.Series | np.ndarray, *, bins: int = 40, title: str = "Norm histogram"
) -> alt.TopLevelMixin:
    """Histogram of embedding norms, binned on the server (``bins`` bars)."""
    values = np.asarray(norms, dtype=float)
    values = values[np.isfinite(values)]
    counts, edges = np.histogram(values, bins=bins) if values.size else (np.zeros(0), [0.0])
    frame = pd.DataFrame({"start": edges[:-1], "end": edges[1:], "count": counts})
    chart = (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X("start:Q", bin="binned", title="‖f‖"),
            x2="end:Q",
            y=alt.Y("count:Q", title="samples"),
            tooltip=[
                alt.Tooltip("start:Q", format=".4g"),
                alt.Tooltip("end:Q", format=".4g"),
                "count:Q",
            ],
        )
    )
    return _finish(chart.properties(height=CHART_HEIGHT), None, title)


def scatter_matrix(
    points: pd.DataFrame,
    coords: Sequence[str],
    *,
    vertices: pd.DataFrame | None = None,
    color: str = "label",
    total: int | None = None,
    cell: int = 110,
    title: str = "Embedding coordinates (scatter-plot matrix)",
) -> alt.TopLevelMixin:
    """Pairwise scatter of ``coords`` (≤ 8 columns), coloured by class.

    ``vertices`` (same coordinate columns) are the fixed head's polytope vertices,
    drawn as black crosses. Points are the raw embeddings; the vertices are unit
    vectors, scaled to the median norm so they sit where the features cluster.
    """
    coords = list(coords)[:8]
    frame = points[[*coords, color]].assign(kind="embedding")
    room = MAX_POINTS - (len(vertices) if vertices is not None else 0)
    frame, note = _limit(frame, [], coords[0] if coords else "", total, max_points=room)
    data = frame
    if vertices is not None and len(vertices):
        data = pd.concat([frame, vertices[coords].assign(kind="vertex")], ignore_index=True)
    has_vertices = vertices is not None and len(vertices) > 0

    def pair(x: str, y: str) -> alt.TopLevelMixin:
        base = alt.Chart().properties(width=cell, height=cell)
        if x == y:  # the diagonal: the coordinate's distribution, not x against itself
            return (
                base.mark_bar(opacity=0.7)
                .encode(
                    x=alt.X(f"{x}:Q", bin=alt.Bin(maxbins=20), title=x),
                    y=alt.Y("count():Q", title="points"),
                )
                .transform_filter(alt.datum.kind == "embedding")
            )
        dots = (
            base.mark_circle(size=10, opacity=0.6)
            .encode(
                x=alt.X(f"{x}:Q", scale=alt.Scale(zero=False)),
                y=alt.Y(f"{y}:Q", scale=alt.Scale(zero=False)),
                color=alt.Color(f"{color}:N", title="class", scale=CATEGORY_SCALE),
            )
            .transform_filter(alt.datum.kind == "embedding")
        )
        if not has_vertices:
            return dots
        marks = (  # "×": a cross turned by 45° (the caption's symbol)
            base.mark_point(shape="cross", angle=45, size=90, color="black", filled=True)
            .encode(x=f"{x}:Q", y=f"{y}:Q")
            .transform_filter(alt.datum.kind == "vertex")
        )
        return alt.layer(dots, marks)

    rows = [alt.hconcat(*(pair(x, y) for x in coords)) for y in coords]
    chart = alt.vconcat(*rows, data=data)
    return _finish(chart, note, title)


def pca_scatter(
    df: pd.DataFrame,
    *,
    explained: Sequence[float] = (0.0, 0.0),
    color: str = "label",
    total: int | None = None,
    title: str = "PCA projection",
) -> alt.TopLevelMixin:
    """Scatter of ``pc1``/``pc2`` coloured by class (PCA computed on the server)."""
    frame, note = _limit(df, [], "pc1", total)
    chart = (
        alt.Chart(frame)
        .mark_circle(size=18, opacity=0.7)
        .encode(
            x=alt.X("pc1:Q", title=f"PC1 ({explained[0]:.0%} of variance)"),
            y=alt.Y("pc2:Q", title=f"PC2 ({explained[1]:.0%} of variance)"),
            color=alt.Color(f"{color}:N", title="class", scale=CATEGORY_SCALE),
            tooltip=[
                f"{color}:N",
                alt.Tooltip("pc1:Q", format=".3g"),
                alt.Tooltip("pc2:Q", format=".3g"),
            ],
        )
    )
    return _finish(chart.properties(height=320), note, title)


def angle_heatmap(
    angles: np.ndarray,
    classes: Sequence,
    *,
    title: str = "Angles between class centroids (degrees)",
) -> alt.TopLevelMixin:
    """Heatmap of a K × K matrix of centroid angles in degrees."""
    labels = [str(c) for c in classes]
    k = len(labels)
    frame = pd.DataFrame(
        {
            "class_a": np.repeat(labels, k),
            "class_b": np.tile(labels, k),
            "angle": np.asarray(angles, dtype=float).reshape(-1),
        }
    )
    frame, note = _limit(frame, [], "angle", k * k)
    chart = (
        alt.Chart(frame)
        .mark_rect()
        .encode(
            x=alt.X("class_b:O", sort=labels, title="class", axis=alt.Axis(labelAngle=0)),
            y=alt.Y("class_a:O", sort=labels, title="class"),
            color=alt.Color("angle:Q", scale=alt.Scale(scheme="viridis"), title="°"),
            tooltip=["class_a:O", "class_b:O", alt.Tooltip("angle:Q", format=".1f")],
        )
    )
    return _finish(chart.properties(height=320), note, title)


def highlight_best(
    table: pd.DataFrame, higher_is_better: dict[str, bool], precision: int = 2
) -> pd.io.formats.style.Styler:
    """A Styler that bolds (and tints) the best value of each scored column."""
    best = transforms.best_rows(table, higher_is_better)
    style = "font-weight: bold; background-color: rgba(44, 160, 44, 0.25)"

    def mark(column: pd.Series) -> list[str]:
        row = best.get(str(column.name))
        return [style if row is not None and index == row else "" for index in column.index]

    return table.style.format(precision=precision, na_rep="–").apply(mark, axis=0)


def chart_points(chart: alt.TopLevelMixin) -> int:
    """Rows a chart embeds (all its datasets), for tests and assertions."""
    spec = chart.to_dict()
    datasets = spec.get("datasets", {})
    return sum(len(rows) for rows in datasets.values())
