"""Geometry charts of one snapshot of embeddings: norm histogram, scatter matrix, PCA,
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

from app.charts.base import CHART_HEIGHT, MAX_POINTS, finish, limit
from app.charts.palette import RUN_PALETTE

Domain = tuple[float, float]
MAX_COORDS = 8
#: Horizontal room a scatter-matrix cell needs besides its plot: axis title and spacing,
#: plus tick labels when the cell is wide enough to carry them without collisions.
CELL_ROOM_LABELLED, CELL_ROOM_BARE, LABELLED_CELL, MIN_CELL = 44, 20, 90, 20
SPACING = 4
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
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X("start:Q", bin="binned", title="‖f‖", scale=_scale(domain)),
            x2="end:Q",
            y=alt.Y("count:Q", title="samples"),
            tooltip=[
                alt.Tooltip("start:Q", format=".4g"),
                alt.Tooltip("end:Q", format=".4g"),
                "count:Q",
            ],
        )
    )
    return finish(chart.properties(height=CHART_HEIGHT), None, title)


def matrix_cell(count: int, width: int) -> tuple[int, bool]:
    """(cell size in px, whether cells carry tick labels) so that ``count`` columns fit
    in ``width`` pixels: labelled cells when they fit at ≥ 90 px, bare ones otherwise
    (values stay readable in the tooltip)."""
    count = max(count, 1)
    labelled = (width - count * (CELL_ROOM_LABELLED + SPACING)) // count
    if labelled >= LABELLED_CELL:
        return int(labelled), True
    return max(MIN_CELL, int((width - count * (CELL_ROOM_BARE + SPACING)) // count)), False


def scatter_matrix(
    points: pd.DataFrame,
    coords: Sequence[str],
    *,
    vertices: pd.DataFrame | None = None,
    color: str = "label",
    total: int | None = None,
    width: int = 720,
    domains: dict[str, Domain] | None = None,
    classes: Sequence | None = None,
    title: str = "Embedding coordinates (scatter-plot matrix)",
) -> alt.TopLevelMixin:
    """Pairwise scatter of ``coords`` (≤ 8 columns), coloured by class, fitted into
    ``width`` pixels (``matrix_cell``); the diagonal is each coordinate's histogram.

    Row ``i``, column ``j`` plots ``coords[j]`` (x) against ``coords[i]`` (y).
    ``vertices`` (same coordinate columns) are the fixed head's polytope vertices,
    drawn as black "×". ``domains`` fixes each coordinate's axis (and histogram bins)
    and ``classes`` the colour of each class (shared side by side).
    """
    coords = list(coords)[:MAX_COORDS]
    cell, labelled = matrix_cell(len(coords), width)
    frame = points[[*coords, color]].assign(kind="embedding")
    frame[color] = class_names(frame[color]).to_numpy()
    has_vertices = vertices is not None and len(vertices) > 0
    room = MAX_POINTS - (len(vertices) if has_vertices else 0)
    frame, note = limit(frame, [], coords[0] if coords else "", total, max_points=room)
    data = frame
    if has_vertices:
        data = pd.concat([frame, vertices[coords].assign(kind="vertex")], ignore_index=True)
    axis = {
        "labels": labelled, "ticks": labelled, "tickCount": 3, "labelFontSize": 9,
        "labelOverlap": True, "titleFontSize": 10, "titlePadding": 2,
    }  # fmt: skip
    domains = domains or {}
    color_enc = _class_color(color, classes)
    tooltip = [f"{color}:N", *[alt.Tooltip(f"{c}:Q", format=".3g") for c in coords]]

    def position(channel: type[alt.X] | type[alt.Y], field: str) -> alt.X | alt.Y:
        return channel(
            f"{field}:Q", scale=_scale(domains.get(field), zero=False), axis=alt.Axis(**axis)
        )

    def histogram(field: str) -> alt.Chart:
        # the diagonal: the coordinate's distribution, not the coordinate against itself;
        # bins over the shared domain, so both sides bin alike; ≥ 6 px a bar, no gaps
        # (1 px bars of a small cell vanish in antialiasing)
        extent = list(domains[field]) if field in domains else alt.Undefined
        return (
            alt.Chart()
            .mark_bar(opacity=0.7, color="#7f7f7f", binSpacing=0)
            .encode(
                x=alt.X(
                    f"{field}:Q",
                    bin=alt.Bin(maxbins=max(5, min(20, cell // 6)), extent=extent),
                    title=field,
                    scale=_scale(domains.get(field), zero=False),
                    axis=alt.Axis(**axis),
                ),
                # counts as "1.2k": no wider than the coordinates' labels
                y=alt.Y("count():Q", title="points", axis=alt.Axis(**axis, format="~s")),
                tooltip=[alt.Tooltip("count():Q", title="points")],
            )
            .transform_filter(alt.datum.kind == "embedding")
        )

    def pair(x: str, y: str) -> alt.LayerChart:
        dots = (
            alt.Chart()
            .mark_circle(size=10, opacity=0.6)
            .encode(x=position(alt.X, x), y=position(alt.Y, y), color=color_enc, tooltip=tooltip)
            .transform_filter(alt.datum.kind == "embedding")
        )
        layers = [dots]
        if has_vertices:  # "×" as the caption says: a cross turned by 45°
            layers.append(
                alt.Chart()
                .mark_point(shape="cross", angle=45, size=90, color="black", filled=True)
                .encode(x=position(alt.X, x), y=position(alt.Y, y))
                .transform_filter(alt.datum.kind == "vertex")
            )
        return alt.layer(*layers)

    def cell_chart(x: str, y: str) -> alt.TopLevelMixin:
        return (histogram(x) if x == y else pair(x, y)).properties(width=cell, height=cell)

    rows = [alt.hconcat(*(cell_chart(x, y) for x in coords), spacing=SPACING) for y in coords]
    chart = alt.vconcat(*rows, data=data, spacing=SPACING).configure_view(strokeWidth=0.5)
    return finish(chart, note, title)


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
        alt.Chart(frame)
        .mark_circle(size=18, opacity=0.7)
        .encode(
            x=alt.X("pc1:Q", title=f"PC1 ({explained[0]:.0%} of variance)", scale=_scale(domain)),
            y=alt.Y("pc2:Q", title=f"PC2 ({explained[1]:.0%} of variance)", scale=_scale(domain)),
            color=_class_color(color, classes),
            tooltip=[
                f"{color}:N",
                alt.Tooltip("pc1:Q", format=".3g"),
                alt.Tooltip("pc2:Q", format=".3g"),
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
