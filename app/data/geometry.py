"""The Geometry page's data: projections and centroid angles of snapshots, head vertices.

The maths is ``sphere_engine.geometry`` (numpy only, shared with the metrics); only
``polytope_vertices`` loads torch, and only for fixed-head runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from app.data.cache import STATIC_TTL
from app.data.reads import coordinate_columns, snapshot, snapshot_coordinates
from sphere_engine.geometry import centroid_angle_matrix, pca_2d


def pca(run_id: str, step: int) -> tuple[pd.DataFrame, list[float]]:
    """2-D PCA of a snapshot (pc1, pc2, label) and the explained-variance ratios."""
    frame = snapshot(run_id, step)
    projected, ratio = pca_2d(snapshot_coordinates(frame))
    result = pd.DataFrame(
        {"pc1": projected[:, 0], "pc2": projected[:, 1], "label": frame["label"].to_numpy()}
    )
    return result, [float(r) for r in ratio]


def centroid_angles(run_id: str, step: int) -> tuple[np.ndarray, list[int]]:
    """K × K angles (degrees) between class centroids, and the class labels."""
    frame = snapshot(run_id, step)
    angles, classes = centroid_angle_matrix(snapshot_coordinates(frame), frame["label"].to_numpy())
    return angles, [int(c) for c in classes]


def fixed_head(config: Mapping[str, Any]) -> str | None:
    """The polytope kind when the run's objective is a fixed head, else None (the head
    registry's traits say which heads are fixed; loads torch, like the vertices)."""
    from sphere_engine.heads import HEADS

    objective = (config or {}).get("objective", {})
    name = objective.get("name")
    if objective.get("kind") == "head" and name in HEADS and HEADS.traits(name).is_fixed:
        return str(name)
    return None


@st.cache_data(ttl=STATIC_TTL, show_spinner=False)
def polytope_vertices(kind: str, num_classes: int, dim: int) -> pd.DataFrame:
    """The fixed head's unit vertices as a frame (label, c0..c{dim-1}); torch loaded here."""
    from sphere_engine.heads import polytope_vertices as vertices

    array = vertices(kind, int(num_classes), int(dim)).detach().cpu().numpy()
    frame = pd.DataFrame(array, columns=[f"c{i}" for i in range(array.shape[1])])
    frame.insert(0, "label", np.arange(len(frame)))
    return frame


def head_vertices(config: Mapping[str, Any], snapshot_frame: pd.DataFrame) -> pd.DataFrame | None:
    """Vertices to draw for a fixed-head run (scaled to the median norm), else None."""
    kind = fixed_head(config)
    if kind is None or snapshot_frame.empty:
        return None
    coords = coordinate_columns(snapshot_frame)
    num_classes = int(snapshot_frame["label"].max()) + 1
    frame = polytope_vertices(kind, num_classes, len(coords)).copy()
    frame[coords] = frame[coords] * float(np.median(snapshot_frame["norm"]))
    return frame


@st.cache_data(ttl=STATIC_TTL, show_spinner=False, max_entries=16)
def principal_components(run_id: str, step: int, count: int) -> tuple[pd.DataFrame, list[float]]:
    """A snapshot's first ``count`` principal components (pc1..pc{count}, label, norm)
    and each one's explained-variance ratio; signs fixed so the largest |loading| of
    each component is positive (the same snapshot always looks the same)."""
    frame = snapshot(run_id, step)
    points = snapshot_coordinates(frame)
    centred = points - points.mean(axis=0)
    _, singular, components = np.linalg.svd(centred, full_matrices=False)
    count = min(int(count), components.shape[0])
    top = components[:count]
    top = top * np.sign(top[np.arange(count), np.abs(top).argmax(axis=1)])[:, None]
    projected = centred @ top.T
    variance = singular**2
    ratios = (variance[:count] / variance.sum()) if variance.sum() > 0 else np.zeros(count)
    result = pd.DataFrame(projected, columns=[f"pc{i + 1}" for i in range(count)])
    result["label"] = frame["label"].to_numpy()
    result["norm"] = frame["norm"].to_numpy()
    return result, [float(r) for r in ratios]
