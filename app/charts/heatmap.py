"""The norm distribution over training steps: a step × norm heatmap of the engine's
fixed-bin histograms (``norm_hist/<bin>``, see ``sphere_engine.catalogue.norm_histogram``)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from app.charts.base import CHART_HEIGHT, finish, limit, zoomable

Domain = tuple[float, float]


def norm_distribution_heatmap(
    cells: pd.DataFrame,
    *,
    x: str = "step",
    norm_domain: Domain | None = None,
    fraction_max: float | None = None,
    total: int | None = None,
    title: str = "Norm distribution over steps (training batch)",
) -> alt.TopLevelMixin:
    """Rectangles x0–x1 × lower–upper coloured by the fraction of the batch in the bin
    (``transforms.histogram_cells`` output), on a log norm axis. ``norm_domain`` and
    ``fraction_max`` share the axis and the colours between runs shown side by side."""
    frame, note = limit(cells, [], "x0", total)
    top = fraction_max or (float(frame["fraction"].max()) if len(frame) else 1.0)
    scale = (
        alt.Scale(type="log", domain=list(norm_domain)) if norm_domain else alt.Scale(type="log")
    )
    chart = (
        alt.Chart(frame)
        .mark_rect()
        .encode(
            x=alt.X("x0:Q", title="seconds since start" if x == "time" else x),
            x2="x1:Q",
            y=alt.Y("lower:Q", title="‖f‖", scale=scale),
            y2="upper:Q",
            color=alt.Color(
                "fraction:Q",
                title="batch share",
                scale=alt.Scale(scheme="viridis", domain=[0.0, top]),
            ),
            tooltip=[
                alt.Tooltip("x0:Q", title=x),
                alt.Tooltip("lower:Q", format=".3g", title="‖f‖ from"),
                alt.Tooltip("upper:Q", format=".3g", title="‖f‖ to"),
                alt.Tooltip("fraction:Q", format=".1%"),
            ],
        )
    )
    return finish(zoomable(chart.properties(height=CHART_HEIGHT)), note, title)


def norm_domain(cells: pd.DataFrame) -> Domain | None:
    """The norms covered by some runs' cells (one axis for all of them)."""
    if cells.empty:
        return None
    return float(cells["lower"].min()), float(cells["upper"].max())
