"""A finding's evidence: its series against the step, the span it fired on shaded."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from app.charts.base import (
    CHART_HEIGHT,
    finish,
    log_axis,
    log_scale,
    number_axis,
    number_text_transform,
    number_tooltip,
    zoomable,
)

SPAN_COLOR = "#d62728"


def evidence_chart(
    rows: pd.DataFrame, span: tuple[int | None, int | None], title: str
) -> alt.TopLevelMixin:
    """Lines of ``rows`` (source, name, step, value), one per series, with the steps
    ``span`` shaded; a log y axis when the values span more than four decades (the
    exploding norms of a diverged run)."""
    rows = rows.assign(series=rows["source"] + ":" + rows["name"])
    values = rows["value"].to_numpy(dtype=float)
    shown = rows[np.isfinite(values)]
    positive = shown["value"] > 0
    log = bool(len(shown) and positive.all() and shown["value"].max() / shown["value"].min() > 1e4)
    lines = (
        number_text_transform(alt.Chart(shown), "value")
        .mark_line(point=len(shown) < 60)
        .encode(
            x=alt.X("step:Q", title="step"),
            y=alt.Y("value:Q", axis=log_axis("value"), scale=log_scale())
            if log
            else alt.Y("value:Q", axis=number_axis("value")),
            color=alt.Color("series:N", title="series"),
            tooltip=["series:N", "step:Q", number_tooltip("value")],
        )
    )
    start, end = span
    layers: list[alt.Chart] = []
    if start is not None:
        band = pd.DataFrame({"start": [start], "end": [end if end is not None else start]})
        layers.append(
            alt.Chart(band)
            .mark_rect(opacity=0.15, color=SPAN_COLOR)
            .encode(x="start:Q", x2="end:Q")
        )
        layers.append(
            alt.Chart(band).mark_rule(color=SPAN_COLOR, strokeDash=[4, 3]).encode(x="start:Q")
        )
    chart = alt.layer(*layers, zoomable(lines)).properties(height=CHART_HEIGHT, width="container")
    return finish(chart, None, title)
