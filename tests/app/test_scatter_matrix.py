"""What the Geometry page's scatter-matrix element is told to draw
(``app.panels.scatter_matrix.matrix_data``); its drawing is checked in a browser by
test_views_browser.py."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from app.charts.base import MAX_POINTS
from app.charts.palette import RUN_PALETTE
from app.panels.scatter_matrix import BINS, matrix_data


def _points(count: int, dims: int, classes: int = 4, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(count, dims)), columns=[f"c{i}" for i in range(dims)])
    return frame.assign(label=np.arange(count) % classes)


def test_at_most_eight_coordinates_and_max_points_with_the_vertices():
    points = _points(6000, 10)
    vertices = pd.DataFrame(np.eye(4, 10), columns=[f"c{i}" for i in range(10)])
    data = matrix_data(points, list(points.columns[:10]), vertices=vertices, total=6000)
    assert data["coords"] == [f"c{i}" for i in range(8)]
    drawn = len(data["labels"])
    assert drawn + 4 <= MAX_POINTS and all(len(v) == drawn for v in data["columns"].values())
    assert [len(v) for v in data["vertices"].values()] == [4] * 8
    assert data["note"] == f"{drawn:,} of 6,000 points"
    json.dumps(data, allow_nan=False)  # what show() sends


def test_shared_domains_and_class_colours_side_by_side():
    """Side by side, each run had its own axes and colours (and a pastel palette)."""
    points = pd.DataFrame({"c0": [0.1, 0.2], "c1": [0.3, 0.4], "label": [0, 2]})
    domains = {"c0": (-1.0, 1.0), "c1": (-2.0, 3.0)}
    data = matrix_data(points, ["c0", "c1"], domains=domains, classes=[0, 1, 2])
    assert data["domains"] == {"c0": [-1.0, 1.0], "c1": [-2.0, 3.0]}
    # integer labels as the legend's strings, each class its palette colour whether
    # or not this panel has points of it
    assert data["classes"] == ["0", "1", "2"] and data["labels"] == ["0", "2"]
    assert data["colors"] == RUN_PALETTE[:3]
    # the diagonal's bins span the shared axis: both sides bin alike
    assert (
        data["histograms"]["c1"] == np.histogram([0.3, 0.4], bins=BINS, range=(-2, 3))[0].tolist()
    )


def test_without_shared_domains_the_axes_span_points_and_vertices():
    points = pd.DataFrame({"c0": [0.0, 1.0], "c1": [0.0, 1.0], "label": [0, 1]})
    vertices = pd.DataFrame({"c0": [4.0, -4.0], "c1": [0.0, 0.0]})
    data = matrix_data(points, ["c0", "c1"], vertices=vertices)
    lo, hi = data["domains"]["c0"]
    assert lo < -4.0 and hi > 4.0  # the vertices are drawn inside their cells
    assert sum(data["histograms"]["c0"]) == 2  # vertices are not embeddings
    assert data["classes"] == ["0", "1"]


def test_a_missing_coordinate_is_sent_as_null():
    points = pd.DataFrame({"c0": [0.0, np.nan, 1.0], "c1": [1.0, 2.0, 3.0], "label": [0, 0, 1]})
    data = matrix_data(points, ["c0", "c1"])
    assert data["columns"]["c0"] == [0.0, None, 1.0]
    assert sum(data["histograms"]["c0"]) == 2
    json.dumps(data, allow_nan=False)
