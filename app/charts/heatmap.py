"""The norm distribution over training steps: a step × norm heatmap of the engine's
fixed-bin histograms (``norm_hist/<bin>``, see ``sphere_engine.catalogue.norm_histogram``)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from app.charts.base import CHART_HEIGHT, finish, limit, x_encoding, x_tooltip, zoomable
from sphere_engine.catalogue.numbers import D3_NUMBER

Domain = tuple[float, float]


def norm_distribution_heatmap(
    cells: pd.DataFrame,
    *,
    x: str = "step",
    norm_domain: Domain | None = None,
    fraction_max: float | None = None,
    fraction_min: float | None = None,
    log_color: bool = False,
    total: int | None = None,
    title: str = "Norm distribution over steps (training batch)",
) -> alt.TopLevelMixin:
    """Rectangles x0–x1 × lower–upper coloured by the fraction of the batch in the bin
    (``transforms.histogram_cells`` output), on a log norm axis. ``norm_domain`` and
    ``fraction_max`` (with ``fraction_min`` on a log colour scale) share the axis and
    the colours between runs shown side by side; without them the colours span the
    data's own range (so the spec does not depend on the data). ``log_color``: a log
    colour scale, which tells apart the thin tails of the distribution (a bin holding
    0.5 % of the batch) that a linear scale draws as dark as an empty one."""
    frame, note = limit(cells, [], "x0", total)
    scale = (
        alt.Scale(type="log", domain=list(norm_domain)) if norm_domain else alt.Scale(type="log")
    )
    colors: dict = {"scheme": "viridis"}
    if log_color:  # cells are non-empty bins: every fraction is > 0
        colors["type"] = "log"
        if fraction_max is not None and fraction_min is not None:
            colors["domain"] = [fraction_min, fraction_max]
    elif fraction_max is not None:
        colors["domain"] = [0.0, fraction_max]
    else:
        colors["domainMin"] = 0.0
    chart = (
        alt.Chart(frame)
        .mark_rect()
        .encode(
            x=x_encoding(x, "x0"),
            x2="x1",
            y=alt.Y("lower:Q", title="‖f‖", scale=scale),
            y2="upper:Q",
            color=alt.Color("fraction:Q", title="batch share", scale=alt.Scale(**colors)),
            tooltip=[
                x_tooltip(x, "x0"),
                alt.Tooltip("lower:Q", format=D3_NUMBER, title="‖f‖ from"),
                alt.Tooltip("upper:Q", format=D3_NUMBER, title="‖f‖ to"),
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
