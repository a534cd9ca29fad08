"""A pair loss's positive or negative cosine distribution over training steps: a step ×
cosine heatmap of the engine's fixed-bin histograms (``mining/pos_sim_hist/<bin>``,
``mining/neg_sim_hist/<bin>``; ``sphere_engine.catalogue.similarity_histogram``)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from app.charts.step_heatmap import step_heatmap
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
    return step_heatmap(
        cells,
        x=x,
        total=total,
        title=title,
        value_title="cosine",
        value_scale=alt.Scale(domain=[LOW, HIGH]),
        share_title="share of pairs",
        share_scale=alt.Scale(scheme="viridis", domainMin=0.0),
    )
