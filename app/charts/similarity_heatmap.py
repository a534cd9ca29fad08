"""A pair loss's positive or negative cosine distribution over training steps: a step ×
cosine heatmap of the engine's fixed-bin histograms (``mining/pos_sim_hist/<bin>``,
``mining/neg_sim_hist/<bin>``; ``sphere_engine.catalogue.similarity_histogram``)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from app.charts.base import CHART_HEIGHT, finish, limit, x_encoding, x_tooltip, zoomable
from sphere_engine.catalogue.similarity_histogram import HIGH, LOW


def similarity_distribution_heatmap(
    cells: pd.DataFrame,
    *,
    x: str = "step",
    total: int | None = None,
    title: str = "Cosine distribution over steps (training batch)",
) -> alt.TopLevelMixin:
    """Rectangles x0–x1 × lower–upper (``transforms.histogram_cells`` output) coloured by
    the share of the batch's pairs in the bin, on the whole cosine axis [-1, 1] (fixed:
    the spec does not depend on the data, and two runs read on one axis)."""
    frame, note = limit(cells, [], "x0", total)
    chart = (
        alt.Chart(frame)
        .mark_rect()
        .encode(
            x=x_encoding(x, "x0"),
            x2="x1",
            y=alt.Y("lower:Q", title="cosine", scale=alt.Scale(domain=[LOW, HIGH])),
            y2="upper:Q",
            color=alt.Color(
                "fraction:Q",
                title="share of pairs",
                scale=alt.Scale(scheme="viridis", domainMin=0.0),
            ),
            tooltip=[
                x_tooltip(x, "x0"),
                alt.Tooltip("lower:Q", format=".2f", title="cosine from"),
                alt.Tooltip("upper:Q", format=".2f", title="cosine to"),
                alt.Tooltip("fraction:Q", format=".1%"),
            ],
        )
    )
    return finish(zoomable(chart.properties(height=CHART_HEIGHT)), note, title)
