"""A 3-D view of 3-d embeddings on the unit sphere (deck.gl through pydeck, which
Streamlit bundles: orbit with the mouse, nothing fetched from the internet)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pydeck

from app.charts.geometry import class_names
from app.charts.palette import RUN_PALETTE
from app.charts.projector import OTHER_COLOUR, colour_classes

RADIUS = 100.0  # deck.gl's orbit view works in its own units: the sphere's radius


def _rgb(colour: str) -> list[int]:
    return [int(colour[i : i + 2], 16) for i in (1, 3, 5)]


def sphere_points(coordinates: np.ndarray, labels: pd.Series) -> pd.DataFrame:
    """Unit directions of N × 3 ``coordinates`` scaled to ``RADIUS``, with a colour per
    class (the 20 largest classes, the rest grey) and the class name."""
    if coordinates.shape[1] != 3:
        raise ValueError(
            f"the sphere view needs 3-d embeddings; these are {coordinates.shape[1]}-d"
        )
    unit = coordinates / np.maximum(np.linalg.norm(coordinates, axis=1, keepdims=True), 1e-12)
    names = class_names(labels).reset_index(drop=True)
    coloured = colour_classes(labels)
    colours = {name: _rgb(RUN_PALETTE[i]) for i, name in enumerate(coloured)}
    return pd.DataFrame(
        {
            "position": (unit * RADIUS).tolist(),
            "color": [colours.get(name, _rgb(OTHER_COLOUR)) for name in names],
            "name": names,
        }
    )


def sphere_deck(points: pd.DataFrame) -> pydeck.Deck:
    layer = pydeck.Layer(
        "PointCloudLayer",
        points,
        get_position="position",
        get_color="color",
        point_size=3,
        pickable=True,
        coordinate_system=0,  # CARTESIAN: plain x, y, z, no map projection
    )
    view = pydeck.View(type="OrbitView", controller=True)
    state = pydeck.ViewState(target=[0, 0, 0], rotation_orbit=30, rotation_x=20, zoom=1.2)
    return pydeck.Deck(
        layers=[layer],
        views=[view],
        initial_view_state=state,
        map_style=None,
        tooltip={"text": "class {name}"},
    )
