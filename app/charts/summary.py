"""Charts that summarise several series or runs: small multiples, a hyperparameter view."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import altair as alt
import pandas as pd

from app.charts.base import CHART_HEIGHT, finish, number_text_transform, number_tooltip

MULTIPLE_WIDTH = 300
MULTIPLE_HEIGHT = 200


def small_multiples(
    charts: Sequence[alt.TopLevelMixin], *, columns: int = 2, title: str | None = None
) -> alt.TopLevelMixin:
    """Several charts in one view: a grid of ``columns``, one shared colour legend (the
    runs keep their colours from chart to chart), each chart's "N of M points" note
    joined into the whole's."""
    parts, notes = [], []
    for chart in charts:
        part = chart.copy(deep=True)
        meta = part.usermeta if part.usermeta is not alt.Undefined else {}
        if meta and meta.get("points_note"):
            notes.append(f"{_title_text(part)}: {meta['points_note']}")
        part.usermeta = alt.Undefined  # only a top-level spec may carry usermeta
        parts.append(part.properties(width=MULTIPLE_WIDTH, height=MULTIPLE_HEIGHT))
    with warnings.catch_warnings():
        # Every part carries the same x-zoom parameter; Altair merges them into one
        # (zooming one multiple zooms all, as on the Run page) and warns that it did.
        warnings.filterwarnings("ignore", "Automatically deduplicated selection", UserWarning)
        grid = alt.concat(*parts, columns=columns).resolve_scale(color="shared")
    return finish(grid, "; ".join(notes) or None, title)


def _title_text(chart: alt.TopLevelMixin) -> str:
    title = chart.title
    text = getattr(title, "text", title)
    return " ".join(text) if isinstance(text, list) else str(text)


def hyperparameter_chart(
    stats: pd.DataFrame, *, key: str, y_title: str, title: str | None = None
) -> alt.TopLevelMixin:
    """A final metric against a config key: mean per value with ± std error bars over
    the runs that share it (``app.data.final_by_config`` output). A numeric key gets a
    quantitative axis (its spacing means something), any other key a categorical one."""
    numeric = len(stats) > 0 and stats["x"].notna().all()
    x = alt.X("x:Q", title=key) if numeric else alt.X("value:N", title=key, sort=None)
    base = number_text_transform(alt.Chart(stats), "mean", "std").encode(x=x)
    tooltip = [
        alt.Tooltip("value:N", title=key),
        number_tooltip("mean"),
        number_tooltip("std"),
        alt.Tooltip("runs:Q"),
    ]
    # A line between categories (optimisers, losses) claims an order they do not have:
    # points alone there.
    mark = base.mark_line(point=True) if numeric else base.mark_point(filled=True, size=80)
    line = mark.encode(
        y=alt.Y("mean:Q", title=y_title, scale=alt.Scale(zero=False)), tooltip=tooltip
    )
    bars = base.mark_errorbar(ticks=True).encode(y=alt.Y("lower:Q", title=y_title), y2="upper:Q")
    return finish(alt.layer(bars, line).properties(height=CHART_HEIGHT), None, title)
