"""The Geometry page's projector: one snapshot by PCA, UMAP or t-SNE, raw or on the
unit sphere, sampled to ``SAMPLE_CAP`` points (said when it samples), classes in at
most 20 colours with a search that brings chosen classes forward."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import data, ui
from app.charts.geometry import class_names
from app.charts.projector import MAX_COLOURS, projector_scatter
from app.charts.sphere_view import sphere_deck, sphere_points
from app.data.projection import NO_IMAGE, point_images, projection
from app.data.reads import coordinate_columns, snapshot, snapshot_coordinates
from app.projection_methods import METHODS

SPACES = {False: "raw embeddings", True: "unit sphere (f / ‖f‖)"}


def show(run_id: str, step: int, *, key: str) -> None:
    """The projector of ``run_id``'s snapshot at ``step``; ``key`` tells the panels apart."""
    st.markdown("**Projector**")
    method_col, space_col = st.columns([2, 2])
    method = method_col.radio("Method", list(METHODS), horizontal=True, key=f"{key}.method")
    on_sphere = space_col.radio(
        "Space", list(SPACES), horizontal=True, key=f"{key}.sphere", format_func=SPACES.get
    )
    result = projection(run_id, step, method, on_sphere)
    points = named_classes(result.points, data.run(run_id).run_info)
    images = point_images(run_id, step, tuple(int(p) for p in points["point"]))
    if images:  # the hover shows each point's image (vega-tooltip draws an "image" key)
        points = points.assign(image=[images.get(int(p), NO_IMAGE) for p in points["point"]])
    names = sorted(class_names(points["label"]).unique(), key=_natural)
    found = st.multiselect(
        f"Find classes ({len(names)}; the {MAX_COLOURS} largest have colours, the rest grey)",
        names,
        key=f"{key}.find.{run_id}",
    )
    note = result.note()
    if result.sampled:
        st.warning(note, icon=":material/info:")
    else:
        st.caption(note)
    title = f"{method} of the {SPACES[on_sphere]} at step {step:,}"
    ui.show_chart(projector_scatter(points, title, found), key=f"{key}.chart")
    frame = snapshot(run_id, step)
    if len(coordinate_columns(frame)) == 3 and st.toggle(
        "3-D sphere view (drag to turn)", key=f"{key}.sphere3d"
    ):
        deck = sphere_deck(sphere_points(snapshot_coordinates(frame), frame["label"]))
        st.pydeck_chart(deck, key=f"{key}.deck")


def named_classes(points: pd.DataFrame, run_info: dict) -> pd.DataFrame:
    """``points`` with each class id replaced by the dataset's class name, where the run
    recorded its test classes' names and ids (image datasets); ids stay otherwise."""
    names, ids = run_info.get("class_names_test"), run_info.get("class_ids_test")
    if not names or not ids or len(names) != len(ids):
        return points
    lookup = {int(i): str(n) for i, n in zip(ids, names, strict=True)}
    return points.assign(label=[lookup.get(int(label), str(label)) for label in points["label"]])


def _natural(name: str) -> tuple[int, int | str]:
    return (0, int(name)) if name.lstrip("-").isdigit() else (1, name)
