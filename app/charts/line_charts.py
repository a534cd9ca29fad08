"""Line and band charts of per-step series (the Run and Compare pages), with stable run
colours: pure functions DataFrame → chart, their rows capped (``base.limit``)."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from app.charts.base import (
    CHART_HEIGHT,
    finish,
    limit,
    log_axis,
    log_scale,
    number_axis,
    number_text_transform,
    number_tooltip,
    x_encoding,
    x_tooltip,
    zoomable,
)
from app.charts.base import legend as legend_style
from app.charts.palette import CATEGORY_SCALE, RUN_PALETTE

# ----------------------------------------------------------------------------- helpers


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


def _y_scale(log_y: bool) -> alt.Scale:
    return log_scale() if log_y else alt.Scale(zero=False)


def _y_axis(title: str, log_y: bool) -> alt.Axis:
    return log_axis(title) if log_y else number_axis(title)


def _positive(df: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """Rows where every column is > 0 (a log axis cannot show the others)."""
    mask = np.ones(len(df), dtype=bool)
    for column in columns:
        if column in df:
            mask &= pd.to_numeric(df[column], errors="coerce").to_numpy() > 0
    return df[mask]


# ----------------------------------------------------------------------------- series


def line_rows(
    df: pd.DataFrame,
    *,
    color: str = "name",
    x: str = "step",
    log_y: bool = False,
    band: bool = False,
    total: int | None = None,
) -> tuple[pd.DataFrame, str | None]:
    """The rows ``metric_lines`` draws (positive ones on a log axis, capped) and the
    "N of M points" note."""
    if not log_y:
        return limit(df, [color], x, total)
    return limit(_log_band(df, color) if band else _positive(df, ["value"]), [color], x, total)


def has_band(df: pd.DataFrame) -> bool:
    """Whether ``df`` (a metric series) has min/max columns that differ from its values
    somewhere: downsampled buckets, whose last value alone hides their spikes."""
    if not {"min", "max"} <= set(df.columns) or df.empty:
        return False
    low, high = df["min"].to_numpy(float), df["max"].to_numpy(float)
    return bool(np.any(np.nan_to_num(high - low) != 0))


def _log_band(df: pd.DataFrame, color: str) -> pd.DataFrame:
    """The rows of a band on a log axis: those with a positive max (a bucket that is 0
    throughout shows nothing there). Values at or below 0 become missing (the line skips
    them) and a band's lower edge at or below 0 sits a decade below the series'
    smallest positive value instead: a loss that is 0 on most steps and spikes on a few
    is still drawn as its spikes."""
    frame = df[pd.to_numeric(df["max"], errors="coerce").to_numpy() > 0].copy()
    if frame.empty:
        return frame
    values = frame[["value", "min", "max"]].apply(pd.to_numeric, errors="coerce")
    positive = values.where(values > 0)
    floor = positive.min(axis=1).groupby(frame[color]).transform("min") / 10
    frame["value"] = positive["value"]
    frame["min"] = positive["min"].fillna(floor)
    return frame


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
    legend: bool | None = None,
) -> alt.TopLevelMixin:
    """Lines of ``value`` over ``x``, one per ``color`` category.

    ``df`` has columns ``x``, value, ``color`` (and min/max for ``band=True``: a shaded
    min–max band behind each line, so a downsampled bucket's spikes show even where its
    last value is 0, ``has_band``). ``total`` is the number of recorded points the
    frame stands for (for the "N of M points" note). ``legend``: None draws one when
    there is more than one category (one series is named by the title).
    """
    frame, note = line_rows(df, color=color, x=x, log_y=log_y, band=band, total=total)
    if legend is None:
        legend = frame[color].nunique() > 1
    color_enc = alt.Color(
        f"{color}:N",
        scale=color_scale or CATEGORY_SCALE,
        title=legend_title or color,
        legend=legend_style() if legend else None,
    )
    base = alt.Chart(frame).encode(x=x_encoding(x))
    line = number_text_transform(base.mark_line(interpolate="linear"), "value").encode(
        y=alt.Y("value:Q", axis=_y_axis(y_title, log_y), scale=_y_scale(log_y)),
        color=color_enc,
        tooltip=[alt.Tooltip(f"{color}:N"), x_tooltip(x), number_tooltip("value")],
    )
    chart: alt.TopLevelMixin = line
    if band and {"min", "max"} <= set(frame.columns):
        area = base.mark_area(opacity=0.18).encode(
            y=alt.Y("min:Q", scale=_y_scale(log_y)), y2="max:Q", color=color_enc
        )
        chart = alt.layer(area, line)
    return finish(zoomable(chart.properties(height=CHART_HEIGHT)), note, title)


def band_rows(
    wide: pd.DataFrame, *, x: str = "step", total: int | None = None
) -> tuple[pd.DataFrame, str | None]:
    """The rows ``norm_band_chart`` draws (with the ± std bounds) and the points note."""
    frame = wide.copy()
    for column in ("std", "min", "max"):
        if column not in frame:
            frame[column] = np.nan
    frame["lower"] = frame["mean"] - frame["std"].fillna(0.0)
    frame["upper"] = frame["mean"] + frame["std"].fillna(0.0)
    frame = frame.assign(series="norm", value=frame["mean"])
    return limit(frame, ["series"], x, total)


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
    frame, note = band_rows(wide, x=x, total=total)
    base = alt.Chart(frame).encode(x=x_encoding(x))
    minmax = base.mark_area(opacity=0.15, color="#1f77b4").encode(
        y=alt.Y("min:Q", axis=number_axis("‖f‖"), scale=alt.Scale(zero=False)), y2="max:Q"
    )
    std = base.mark_area(opacity=0.35, color="#1f77b4").encode(y="lower:Q", y2="upper:Q")
    shown = ("mean", "std", "min", "max")
    mean = number_text_transform(base.mark_line(color="#1f77b4"), *shown).encode(
        y="mean:Q", tooltip=[x_tooltip(x), *(number_tooltip(f) for f in shown)]
    )
    chart = alt.layer(minmax, std, mean).properties(height=CHART_HEIGHT)
    return finish(zoomable(chart), note, title)


def sample_norm_chart(
    df: pd.DataFrame,
    *,
    x: str = "step",
    total: int | None = None,
    title: str = "Tracked-sample norm trajectories",
) -> alt.TopLevelMixin:
    """One thin line per tracked training sample: ``df`` has ``x``, sample, norm."""
    frame, note = limit(df, ["sample"], x, total)
    chart = number_text_transform(
        alt.Chart(frame).mark_line(strokeWidth=1, opacity=0.7), "norm"
    ).encode(
        x=x_encoding(x),
        y=alt.Y("norm:Q", axis=number_axis("‖f‖"), scale=alt.Scale(zero=False)),
        color=alt.Color("sample:N", legend=None),
        tooltip=["sample:N", x_tooltip(x), number_tooltip("norm")],
    )
    return finish(zoomable(chart.properties(height=CHART_HEIGHT)), note, title)


def group_band_chart(
    stats: pd.DataFrame,
    *,
    x: str = "step",
    title: str | None = None,
    y_title: str = "value",
    total: int | None = None,
    log_y: bool = False,
) -> alt.TopLevelMixin:
    """Mean line with a ± std band per group (``transforms.group_mean_std`` output).

    On a log axis, a band reaching zero or below is cut at the mean."""
    frame = stats
    if log_y:
        frame = _positive(stats, ["mean"])
        frame = frame.assign(lower=frame["lower"].where(frame["lower"] > 0, frame["mean"]))
    frame, note = limit(frame, ["group"], x, total)
    base = alt.Chart(frame).encode(
        x=x_encoding(x), color=alt.Color("group:N", scale=CATEGORY_SCALE, legend=legend_style())
    )
    band = base.mark_area(opacity=0.2).encode(
        y=alt.Y("lower:Q", axis=_y_axis(y_title, log_y), scale=_y_scale(log_y)), y2="upper:Q"
    )
    line = number_text_transform(base.mark_line(), "mean", "std").encode(
        y="mean:Q",
        tooltip=["group:N", x_tooltip(x), number_tooltip("mean"), number_tooltip("std"), "runs:Q"],
    )
    chart = alt.layer(band, line).properties(height=CHART_HEIGHT)
    return finish(zoomable(chart), note, title)
