"""Geometry charts of one snapshot of embeddings: norm histogram, PCA,
centroid angles, and the norm distribution over training steps.

Side by side, two runs must be read on the same axes and colours, or the difference a
user compares (a narrow norm distribution with SEC, a wide one without) disappears in
rescaled axes. Every builder therefore takes optional ``domain``s and ``classes``;
``shared_domains`` computes them over the snapshots shown together.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from app.charts.base import CHART_HEIGHT, finish, limit, number_text_transform, number_tooltip
from app.charts.palette import RUN_PALETTE

Domain = tuple[float, float]
MAX_COORDS = 8
ANGLE_DOMAIN = (0.0, 180.0)


def shared_domains(frames: Sequence[pd.DataFrame], columns: Sequence[str]) -> dict[str, Domain]:
    """column → (min, max) over all frames that have it: one axis for every panel."""
    result: dict[str, Domain] = {}
    for column in columns:
        values = [f[column].to_numpy(float) for f in frames if column in f and len(f)]
        if not values:
            continue
        joined = np.concatenate(values)
        joined = joined[np.isfinite(joined)]
        if joined.size:
            lo, hi = float(joined.min()), float(joined.max())
            pad = (hi - lo) * 0.02 or 0.5
            result[column] = (lo - pad, hi + pad)
    return result


def _scale(domain: Domain | None, **extra: object) -> alt.Scale:
    return alt.Scale(domain=list(domain), nice=False, **extra) if domain else alt.Scale(**extra)


def class_names(values: Sequence | pd.Series) -> pd.Series:
    """Class labels as the strings the colour scale's domain holds ("3", not 3 or 3.0).

    Vega looks a value up in an explicit domain by type: an integer label against the
    string domain gets no colour at all, and the scatter's dots vanish."""
    series = pd.Series(values)
    numbers = pd.to_numeric(series, errors="coerce")
    if len(series) and numbers.notna().all() and (numbers % 1 == 0).all():
        series = numbers.astype("int64")
    return series.astype(str)


def _class_color(color: str, classes: Sequence | None) -> alt.Color:
    """Classes in the high-contrast palette; ``classes`` (shared side by side) pins
    each class to one colour whichever classes a panel happens to contain. The data's
    ``color`` column must hold ``class_names``."""
    domain = class_names(classes).tolist() if classes is not None else alt.Undefined
    scale = alt.Scale(domain=domain, range=RUN_PALETTE)
    return alt.Color(f"{color}:N", title="class", scale=scale, sort=None)


def norm_histogram(
    norms: pd.Series | np.ndarray,
    *,
    bins: int = 40,
    domain: Domain | None = None,
    title: str = "Norm histogram",
) -> alt.TopLevelMixin:
    """Histogram of embedding norms, binned on the server (``bins`` bars over ``domain``
    when given, so two runs' histograms share their bins and axis)."""
    values = np.asarray(norms, dtype=float)
    values = values[np.isfinite(values)]
    if values.size:
        counts, edges = np.histogram(values, bins=bins, range=domain)
    else:
        counts, edges = np.zeros(0), np.zeros(1)
    frame = pd.DataFrame({"start": edges[:-1], "end": edges[1:], "count": counts})
    chart = (
        number_text_transform(alt.Chart(frame), "start", "end")
        .mark_bar()
        .encode(
            x=alt.X("start:Q", bin="binned", title="‖f‖", scale=_scale(domain)),
            x2="end:Q",
            y=alt.Y("count:Q", title="samples"),
            tooltip=[
                number_tooltip("start"),
                number_tooltip("end"),
                "count:Q",
            ],
        )
    )
    return finish(chart.properties(height=CHART_HEIGHT), None, title)


def pca_scatter(
    df: pd.DataFrame,
    *,
    explained: Sequence[float] = (0.0, 0.0),
    color: str = "label",
    total: int | None = None,
    domain: Domain | None = None,
    classes: Sequence | None = None,
    title: str = "PCA projection",
) -> alt.TopLevelMixin:
    """Scatter of ``pc1``/``pc2`` coloured by class (PCA computed on the server)."""
    frame, note = limit(df.assign(**{color: class_names(df[color]).to_numpy()}), [], "pc1", total)
    chart = (
        number_text_transform(alt.Chart(frame), "pc1", "pc2")
        .mark_circle(size=18, opacity=0.7)
        .encode(
            x=alt.X("pc1:Q", title=f"PC1 ({explained[0]:.0%} of variance)", scale=_scale(domain)),
            y=alt.Y("pc2:Q", title=f"PC2 ({explained[1]:.0%} of variance)", scale=_scale(domain)),
            color=_class_color(color, classes),
            tooltip=[
                f"{color}:N",
                number_tooltip("pc1"),
                number_tooltip("pc2"),
            ],
        )
    )
    return finish(chart.properties(height=320), note, title)


def angle_heatmap(
    angles: np.ndarray,
    classes: Sequence,
    *,
    title: str = "Angles between class centroids (degrees)",
) -> alt.TopLevelMixin:
    """Heatmap of a K × K matrix of centroid angles in degrees, on a fixed 0–180° colour
    scale (the same colour means the same angle in every run)."""
    labels = [str(c) for c in classes]
    k = len(labels)
    frame = pd.DataFrame(
        {
            "class_a": np.repeat(labels, k),
            "class_b": np.tile(labels, k),
            "angle": np.asarray(angles, dtype=float).reshape(-1),
        }
    )
    frame, note = limit(frame, [], "angle", k * k)
    chart = (
        alt.Chart(frame)
        .mark_rect()
        .encode(
            x=alt.X("class_b:O", sort=labels, title="class", axis=alt.Axis(labelAngle=0)),
            y=alt.Y("class_a:O", sort=labels, title="class"),
            color=alt.Color(
                "angle:Q", scale=alt.Scale(scheme="viridis", domain=list(ANGLE_DOMAIN)), title="°"
            ),
            tooltip=["class_a:O", "class_b:O", alt.Tooltip("angle:Q", format=".1f")],
        )
    )
    return finish(chart.properties(height=320), note, title)
