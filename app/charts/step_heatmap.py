"""A distribution over training steps drawn as a step × value heatmap: one rectangle per
non-empty bin (x0–x1 × lower–upper, ``transforms.histogram_cells`` output) coloured by
the share in the bin. The norm and the cosine heatmaps are this with their own axis."""

from __future__ import annotations

import altair as alt
import pandas as pd

from app.charts.base import (
    CHART_HEIGHT,
    finish,
    limit,
    number_text_transform,
    number_tooltip,
    x_encoding,
    x_tooltip,
    zoomable,
)


def step_heatmap(
    cells: pd.DataFrame,
    *,
    x: str,
    total: int | None,
    title: str,
    value_title: str,
    value_scale: alt.Scale,
    share_title: str,
    share_scale: alt.Scale,
) -> alt.TopLevelMixin:
    """The heatmap of ``cells`` on the value axis ``value_scale`` (titled
    ``value_title``, bin edges written by the one number rule) and the colour scale
    ``share_scale`` of the share titled ``share_title``."""
    frame, note = limit(cells, [], "x0", total)
    chart = (
        number_text_transform(alt.Chart(frame), "lower", "upper")
        .mark_rect()
        .encode(
            x=x_encoding(x, "x0"),
            x2="x1",
            y=alt.Y("lower:Q", title=value_title, scale=value_scale),
            y2="upper:Q",
            color=alt.Color("fraction:Q", title=share_title, scale=share_scale),
            tooltip=[
                x_tooltip(x, "x0"),
                number_tooltip("lower", f"{value_title} from"),
                number_tooltip("upper", f"{value_title} to"),
                alt.Tooltip("fraction:Q", format=".1%"),
            ],
        )
    )
    return finish(zoomable(chart.properties(height=CHART_HEIGHT)), note, title)
