"""What every chart builder shares: sizes, wrapped titles, the points note, zooming."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from app import transforms
from sphere_engine.catalogue.numbers import (
    D3_COUNT,
    D3_SECONDS,
    VEGA_LABEL_EXPR,
    format_number,
    vega_number_expr,
)

MAX_POINTS = 5000
CHART_HEIGHT = 260
#: The x axes a page offers: the step, seconds since the run started, and the wall
#: clock (``clock``: epoch milliseconds, drawn as local time on a temporal axis).
X_AXES = ("step", "time", "clock")
X_LABELS = {"step": "step", "time": "relative time", "clock": "wall clock"}
X_TITLES = {"step": "step", "time": "seconds since start", "clock": "wall clock (local time)"}
#: Characters of a title line that fit a chart in half the page's width.
TITLE_CHARS = 42


def title_lines(title: str, width: int = TITLE_CHARS) -> str | list[str]:
    """The title as is when it fits a half-page chart, else wrapped into lines (Vega
    draws a list as lines; one long line is cut off at the chart's edge)."""
    return title if len(title) <= width else textwrap.wrap(title, width)


def finish(chart: alt.TopLevelMixin, note: str | None, title: str | None) -> alt.TopLevelMixin:
    """Attach the "N of M points" note (``usermeta``) and a wrapped, left-anchored title."""
    props: dict = {"usermeta": {"points_note": note}}
    if title:
        props["title"] = alt.TitleParams(title_lines(title), anchor="start")
    return chart.properties(**props)


def x_encoding(x: str, field: str | None = None) -> alt.X:
    """The x channel for axis ``x`` (one of ``X_AXES``), reading column ``field`` (default
    ``x``: the heatmap's cells read x0)."""
    if x == "clock":
        return alt.X(f"{field or x}:T", title=X_TITLES[x])
    # steps and seconds: thousands separators, as every number here (catalogue.numbers)
    return alt.X(f"{field or x}:Q", title=X_TITLES.get(x, x), axis=alt.Axis(format=_d3(x)))


def legend(title: str | None = None) -> alt.Legend:
    """The colour legend of runs, metrics or groups: one entry a line under the chart,
    labels whole (a row of entries was cut off at the chart's edge after three runs)."""
    extra = {} if title is None else {"title": title}
    return alt.Legend(
        orient="bottom", direction="vertical", columns=1, labelLimit=0, symbolLimit=0, **extra
    )


def x_tooltip(x: str, field: str | None = None) -> alt.Tooltip:
    """The x value in a tooltip: the step, seconds, or the local time of day."""
    if x == "clock":
        return alt.Tooltip(f"{field or x}:T", title="time", format="%H:%M:%S")
    return alt.Tooltip(f"{field or x}:Q", title=x, format=_d3(x))


def _d3(x: str) -> str:
    return D3_COUNT if x == "step" else D3_SECONDS


def number_axis(title: str | None = None) -> alt.Axis:
    """A quantitative axis whose labels read as every number here does
    (``sphere_engine.catalogue.numbers``: 3 significant digits, thousands separators)."""
    extra = {} if title is None else {"title": title}
    return alt.Axis(labelExpr=VEGA_LABEL_EXPR, **extra)


#: The ticks of every log axis: powers of ten only (Vega's own crammed a decade with
#: 0.01 0.008 0.006 … or picked 0.06, 0.007, 8e-4). With ``log_scale``'s nice domain
#: (whole decades) at least two of them are inside it.
DECADES = tuple(10.0**k for k in range(-30, 31))


def log_scale(**options: object) -> alt.Scale:
    """A log scale over whole decades (its domain rounded out to powers of ten)."""
    return alt.Scale(type="log", nice=True, **options)


def log_axis(title: str | None = None, **options: object) -> alt.Axis:
    """``number_axis`` with ticks and grid lines at powers of ten only."""
    settings: dict[str, object] = {
        "labelExpr": VEGA_LABEL_EXPR,
        "values": list(DECADES),
        "labelOverlap": True,
        **({} if title is None else {"title": title}),
        **options,
    }
    return alt.Axis(**{k: v for k, v in settings.items() if v is not None})


def number_tooltip(field: str, title: str | None = None) -> alt.Tooltip:
    """A tooltip of numeric ``field`` as text formatted in the browser: the chart
    needs ``number_text_transform(field)`` (live charts swap their rows)."""
    return alt.Tooltip(f"{field}_text:N", title=title or field)


def number_text_transform(chart: alt.TopLevelMixin, *fields: str) -> alt.TopLevelMixin:
    """``chart`` with a ``<field>_text`` column per field, written in the browser as
    ``format_number`` writes it (for ``number_tooltip``)."""
    for field in fields:
        chart = chart.transform_calculate(
            **{f"{field}_text": vega_number_expr(f"datum[{field!r}]")}
        )
    return chart


def with_number_text(frame: pd.DataFrame, fields: Sequence[str]) -> pd.DataFrame:
    """``frame`` with a ``<field>_text`` column per field (``format_number``), for the
    tooltips of charts drawn once from their rows."""
    return frame.assign(**{f"{f}_text": frame[f].map(format_number) for f in fields})


def zoomable(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """Zoom and pan along x with the mouse wheel and drag (double-click resets);
    hover values come from each mark's tooltip."""
    return chart.add_params(alt.selection_interval(bind="scales", encodings=["x"]))


def points_note(shown: int, total: int | None) -> str | None:
    """ "N of M points" when fewer points are shown than were recorded, else None."""
    if total is None or shown >= total:
        return None
    return f"{shown:,} of {total:,} points"


def limit(
    df: pd.DataFrame, by: Sequence[str], x: str, total: int | None, max_points: int = MAX_POINTS
) -> tuple[pd.DataFrame, str | None]:
    """At most ``max_points`` rows (downsampled per ``by`` series on a shared ``x``
    grid, else sampled evenly) and the "N of M points" note."""
    recorded = max(total or 0, len(df))
    limited = transforms.cap_total_points(df, max_points, by=by, x=x) if by else df
    if len(limited) > max_points:  # no series structure: sample rows evenly
        idx = np.linspace(0, len(limited) - 1, max_points).astype(int)
        limited = limited.iloc[np.unique(idx)]
    return limited, points_note(len(limited), recorded)


def chart_points(chart: alt.TopLevelMixin) -> int:
    """Rows a chart embeds (all its datasets), for tests and assertions."""
    spec = chart.to_dict()
    datasets = spec.get("datasets", {})
    return sum(len(rows) for rows in datasets.values())
