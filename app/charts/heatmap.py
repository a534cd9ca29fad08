"""The norm distribution over training steps: a step × norm heatmap of the engine's
fixed-bin histograms (``norm_hist/<bin>``, see ``sphere_engine.catalogue.norm_histogram``)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from app.charts.step_heatmap import step_heatmap

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
    return step_heatmap(
        cells,
        x=x,
        total=total,
        title=title,
        value_title="‖f‖",
        value_scale=scale,
        share_title="batch share",
        share_scale=alt.Scale(**colors),
    )


def norm_domain(cells: pd.DataFrame) -> Domain | None:
    """The norms covered by some runs' cells (one axis for all of them)."""
    if cells.empty:
        return None
    return float(cells["lower"].min()), float(cells["upper"].max())
