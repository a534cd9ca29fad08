"""The Geometry page's scatter-plot matrix as one canvas element (``scatter_matrix.js``).

As a Vega-Lite chart the matrix was up to 64 views (8 coordinates): compiling and
embedding them held the browser's main thread for ~0.8 s on an idle machine, and
2–3 s beside two training runs, a freeze just after the page's first charts
appeared. The element draws the same cells on one canvas, a row per frame, in tens of
milliseconds, and fits them to the width the page gives it (and keeps fitting on
resize). The server sends what to draw, already decided: each coordinate's axis
(shared side by side), the diagonal's histogram counts, the class colours, the fixed
head's vertices.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pandas as pd

from app.charts.base import MAX_POINTS, limit
from app.charts.geometry import MAX_COORDS, Domain, class_names, shared_domains
from app.charts.palette import RUN_PALETTE
from app.panels.elements import element

#: Histogram bars on the diagonal: enough to show a shape in a small cell.
BINS = 20

_component = element("spherescope_scatter_matrix", "scatter_matrix")


def matrix_data(
    points: pd.DataFrame,
    coords: Sequence[str],
    *,
    vertices: pd.DataFrame | None = None,
    domains: dict[str, Domain] | None = None,
    classes: Sequence | None = None,
    title: str = "Embedding coordinates (scatter-plot matrix)",
    total: int | None = None,
) -> dict:
    """What the element draws: row ``i``, column ``j`` plots ``coords[j]`` (x) against
    ``coords[i]`` (y), and the diagonal each coordinate's histogram.

    ``points`` holds the coordinate columns and ``label``; at most ``MAX_POINTS`` of
    them are drawn (evenly sampled; ``note`` says so). ``domains`` fixes each
    coordinate's axis (side by side: one axis for both runs), else it spans the points
    and ``vertices``. ``classes`` fixes each class's colour (default: the classes
    present, sorted)."""
    coords = [c for c in coords if c in points][:MAX_COORDS]
    has_vertices = vertices is not None and len(vertices) > 0
    room = MAX_POINTS - (len(vertices) if has_vertices else 0)
    drawn, note = limit(points, [], coords[0] if coords else "", total, max_points=room)
    labels = class_names(drawn["label"]) if len(drawn) else pd.Series([], dtype=str)
    if classes is None:
        classes = sorted(pd.unique(drawn["label"])) if len(drawn) else []
    legend = class_names(list(classes)).tolist()
    spanned = shared_domains([drawn, vertices] if has_vertices else [drawn], coords)
    fixed = domains or {}
    axes = {c: fixed[c] if c in fixed else spanned.get(c, (-1.0, 1.0)) for c in coords}
    return {
        "title": title,
        "coords": coords,
        "columns": {c: _finite(drawn[c]) for c in coords},
        "labels": labels.tolist(),
        "classes": legend,
        "colors": [RUN_PALETTE[i % len(RUN_PALETTE)] for i in range(len(legend))],
        "domains": {c: list(axes[c]) for c in coords},
        "histograms": {c: _histogram(drawn[c], axes[c]) for c in coords},
        "vertices": {c: _finite(vertices[c]) for c in coords} if has_vertices else None,
        "note": note,
    }


def show(data: dict, *, key: str) -> None:
    """Draw ``matrix_data``'s matrix, with its title, legend and "N of M points" note."""
    # One JSON string: the frontend parses it once (a dict would be walked by
    # Streamlit's serialiser value by value; the columns hold up to 40k numbers).
    _component(data={"matrix": json.dumps(data, allow_nan=False)}, key=key)


def _finite(values: pd.Series) -> list[float | None]:
    """Floats for JSON (a NaN coordinate, never drawn, as null)."""
    array = values.to_numpy(dtype=float)
    return [float(v) if np.isfinite(v) else None for v in array]


def _histogram(values: pd.Series, domain: Domain) -> list[int]:
    """Counts in ``BINS`` equal bins over ``domain`` (both sides bin alike)."""
    array = values.to_numpy(dtype=float)
    counts, _ = np.histogram(array[np.isfinite(array)], bins=BINS, range=tuple(domain))
    return counts.tolist()
