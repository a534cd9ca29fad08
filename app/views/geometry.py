"""Geometry: one snapshot of test embeddings (or two side by side, on shared axes and
colours, driven by one step slider), and recorded analyses."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from app import data, ui
from app.charts.geometry import (
    MAX_COORDS,
    angle_heatmap,
    norm_histogram,
    pca_scatter,
    shared_domains,
)
from app.panels import face_conventions, projector, run_picker, scatter_matrix

#: Columns the scatter matrix shows at first: all 8 fit the page's width, 4 half of it.
DEFAULT_COLUMNS = {True: MAX_COORDS, False: 4}
#: The "Recorded analyses" table lists the newest this many.
ANALYSES_SHOWN = 50
BASES = {"coordinates": "raw coordinates", "pcs": "principal components"}


@dataclass
class Panel:
    slot: int  # 0, or 1 on the right side by side (both may show the same run)
    run_id: str
    step: int | None
    snap: pd.DataFrame
    vertices: pd.DataFrame | None  # a fixed head's, over raw coordinates only


def main() -> None:
    st.title("Embedding geometry")
    # -- widgets ---------------------------------------------------------------------
    side_by_side = st.toggle("Two runs side by side", key="geometry.pair")
    columns = st.columns(2) if side_by_side else [st.container()]
    keys = [f"geometry.run{slot}" for slot in range(len(columns))]
    run_ids = run_picker.pick_runs(keys, places=columns)
    # -- empty state -----------------------------------------------------------------
    if not run_ids[0]:
        ui.empty_state(
            "No runs yet. Train a run (its evaluations record snapshots of the "
            "test embeddings) or record one with `spherescope analyze FILE`."
        )
    steps = _pick_steps(run_ids, columns)
    basis_col, dims_col = st.columns([1, 2])
    basis = basis_col.radio(
        "Scatter matrix of", list(BASES), key="geometry.basis", format_func=BASES.get
    )
    panels = [
        _panel_of(slot, r, s, basis) for slot, (r, s) in enumerate(zip(run_ids, steps, strict=True))
    ]
    # -- charts ----------------------------------------------------------------------
    dims = max((len(data.coordinate_columns(p.snap)) for p in panels), default=0)
    names = (
        [f"c{i}" for i in range(dims)]
        if basis == "coordinates"
        else [f"pc{i + 1}" for i in range(dims)]
    )
    shown = dims_col.multiselect(
        f"Columns to plot (up to {MAX_COORDS})",
        names,
        default=names[: DEFAULT_COLUMNS[not side_by_side]],
        max_selections=MAX_COORDS,
        key=f"geometry.columns.{basis}.{dims}",
    )
    shared = _shared(panels, basis, shown)
    first = ui.first_paint("geometry")  # the scatter matrix and the rest follow
    for column, panel in zip(columns, panels, strict=True):
        with column:
            _panel(panel, basis, shown, shared, wide=not side_by_side, first=first)
    if first:
        ui.follow_up()
        return
    _analyses()


def _panel_of(slot: int, run_id: str, step: int | None, basis: str) -> Panel:
    snap = data.snapshot(run_id, step) if step is not None else pd.DataFrame()
    vertices = data.head_vertices(data.run(run_id).config, snap) if basis == "coordinates" else None
    return Panel(slot, run_id, step, snap, vertices)


def _pick_steps(run_ids: list[str], columns: list) -> list[int | None]:
    """Each side's snapshot step: one slider for both sides over the steps they share
    (the usual case: same eval_every), else one slider per side."""
    per_run = [data.snapshot_steps(r) if r else [] for r in run_ids]
    common = sorted(set(per_run[0]).intersection(*per_run[1:])) if per_run else []
    if len(run_ids) > 1 and common:
        if len(common) == 1:
            return [common[0]] * len(run_ids)
        step = st.select_slider(
            "Snapshot step (both sides)", common, value=common[-1], key="geometry.step.both"
        )
        return [step] * len(run_ids)
    picked: list[int | None] = []
    for slot, (column, steps) in enumerate(zip(columns, per_run, strict=True)):
        with column:
            if len(steps) > 1:
                key = f"geometry.step{slot}.{run_ids[slot]}"
                picked.append(st.select_slider("Snapshot step", steps, value=steps[-1], key=key))
            else:
                picked.append(steps[0] if steps else None)
    return picked


def _points(panel: Panel, basis: str, shown: list[str]) -> tuple[pd.DataFrame, list[float]]:
    """The frame the scatter matrix draws: raw coordinates, or principal components."""
    if basis == "coordinates" or panel.step is None:
        return panel.snap, []
    count = max((int(c[2:]) for c in shown), default=2)
    return data.principal_components(panel.run_id, panel.step, max(count, 2))


def _shared(panels: list[Panel], basis: str, shown: list[str]) -> dict:
    """Axes and colours shared by the panels shown together."""
    snaps = [p.snap for p in panels if not p.snap.empty]
    points = [_points(p, basis, shown)[0] for p in panels if not p.snap.empty]
    points += [p.vertices for p in panels if p.vertices is not None]  # inside the axes
    pcas = [
        data.pca(p.run_id, p.step)[0] for p in panels if p.step is not None and not p.snap.empty
    ]
    pc_domain = shared_domains(pcas, ["pc1", "pc2"])
    both = [pc_domain[c] for c in ("pc1", "pc2") if c in pc_domain]
    classes = sorted({int(c) for s in snaps for c in s["label"].unique()})
    return {
        "norm": shared_domains(snaps, ["norm"]).get("norm"),
        "matrix": shared_domains(points, shown),
        "pca": (min(d[0] for d in both), max(d[1] for d in both)) if both else None,
        "classes": classes,
    }


def _panel(
    panel: Panel, basis: str, shown: list[str], shared: dict, *, wide: bool, first: bool = False
) -> None:
    """One snapshot's charts; ``first``: the page's first paint, the norm histogram and
    the PCA only (the scatter matrix, the slowest to embed, follows)."""
    record = data.run(panel.run_id)
    if record.kind == "analysis":
        _analysis_metrics(panel.run_id)
    if panel.step is None:
        st.info(
            "This run has no embedding snapshot yet: snapshots are recorded at each "
            "evaluation (diagnostics.eval_every).",
            icon=":material/hourglass_top:",
        )
        return
    snap = panel.snap
    if snap.empty:
        st.info(f"No snapshot at step {panel.step}.", icon=":material/info:")
        return
    coords = data.coordinate_columns(snap)
    st.caption(
        f"Step {panel.step}: {len(snap):,} test embeddings, d = {len(coords)}, "
        f"{snap['label'].nunique()} classes"
    )
    left, right = st.columns(2) if wide else (st.container(), st.container())
    with left:
        ui.show_chart(norm_histogram(snap["norm"], domain=shared["norm"]))
    with right:
        projected, explained = data.pca(panel.run_id, panel.step)
        ui.show_chart(
            pca_scatter(
                projected, explained=explained, domain=shared["pca"], classes=shared["classes"]
            )
        )
    if first:
        return
    ui.guarded(projector.show)(panel.run_id, panel.step, key=f"geometry.projector{panel.slot}")
    if len(shown) >= 1:
        _matrix(panel, record, basis, shown, shared)
    angles, classes = data.centroid_angles(panel.run_id, panel.step)
    ui.show_chart(angle_heatmap(angles, classes))


def _matrix(panel: Panel, record, basis: str, shown: list[str], shared: dict) -> None:
    points, ratios = _points(panel, basis, shown)
    present = [c for c in shown if c in points]
    vertices = panel.vertices
    total_dims = len(data.coordinate_columns(panel.snap))
    if basis == "coordinates":
        title = (
            f"{len(present)} of {total_dims} coordinates"
            if len(present) < total_dims
            else f"All {total_dims} coordinates"
        )
    else:
        share = sum(ratios[int(c[2:]) - 1] for c in present if int(c[2:]) <= len(ratios))
        title = f"{len(present)} principal components ({share:.0%} of variance)"
    if vertices is not None:
        title += f" · fixed {data.fixed_head(record.config)} vertices (×, scaled to median ‖f‖)"
    matrix = scatter_matrix.matrix_data(
        points,
        present,
        vertices=vertices,
        domains=shared["matrix"],
        classes=shared["classes"],
        title=title,
    )
    scatter_matrix.show(matrix, key=f"geometry.matrix.{panel.slot}")


def _analysis_metrics(run_id: str) -> None:
    finals = data.final_metrics([run_id])
    if finals.empty:
        return
    table = finals.drop(columns=["run_id", "name"]).T.reset_index()
    table.columns = ["metric", "value"]
    table["metric"] = table["metric"].map(data.metric_key)  # analyses only evaluate
    st.markdown("**Analysis metrics**")
    st.dataframe(table, hide_index=True, width="stretch")
    face_conventions.show(run_id)


def _analyses() -> None:
    """The newest recorded analyses (the catalogue answers: never every run)."""
    analyses = data.runs(kind="analysis", limit=ANALYSES_SHOWN)
    st.subheader("Recorded analyses")
    if analyses.empty:
        st.caption(
            "None yet. `spherescope analyze EMBEDDINGS_FILE` records one; pick it above "
            "to see its snapshot."
        )
        return
    finals = data.final_metrics(analyses["run_id"].tolist())
    finals = finals.rename(columns={c: data.metric_key(c) for c in finals.columns[2:]})
    st.dataframe(finals, hide_index=True, width="stretch")


ui.run_page(main)
