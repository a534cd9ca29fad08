"""Geometry: one snapshot of test embeddings (or two side by side), and recorded analyses."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import charts, data, ui

MAX_COORDS = 8


def main() -> None:
    st.title("Embedding geometry")
    # -- widgets ---------------------------------------------------------------------
    frame = data.runs()
    labels = data.run_labels(frame) if not frame.empty else {}
    wanted = ui.query_param("run_id")
    ui.warn_unknown_runs([wanted] if wanted else [], labels)  # issue 14, bug 13
    options = list(labels)
    preferred = data.preferred_runs(frame, 2)
    if wanted in labels:
        preferred = [wanted, *[r for r in preferred if r != wanted]]
    side_by_side = st.toggle("Two runs side by side", key="geometry.pair")
    columns = st.columns(2) if side_by_side else [st.container()]
    picks = []
    for slot, column in enumerate(columns):
        with column:
            default = options.index(preferred[min(slot, len(preferred) - 1)]) if preferred else 0
            run_id = st.selectbox(
                f"Run {slot + 1}" if side_by_side else "Run",
                options,
                index=default if options else None,
                key=f"geometry.run{slot}",
                format_func=lambda r: labels.get(r, r),
            )
            steps = data.snapshot_steps(run_id) if run_id else []
            step = (
                st.select_slider(
                    "Snapshot step", steps, value=steps[-1], key=f"geometry.step{slot}.{run_id}"
                )
                if len(steps) > 1
                else (steps[0] if steps else None)
            )
            picks.append((column, run_id, step))
    # -- empty state -----------------------------------------------------------------
    if not options:
        ui.empty_state(
            "No runs yet. Train a run (its evaluations record snapshots of the "
            "test embeddings) or record one with `spherescope analyze FILE`."
        )
    # -- charts ----------------------------------------------------------------------
    for column, run_id, step in picks:
        with column:
            _panel(run_id, step, wide=not side_by_side)
    _analyses(frame)


def _panel(run_id: str, step: int | None, *, wide: bool) -> None:
    record = data.run(run_id)
    if record.kind == "analysis":
        _analysis_metrics(run_id)
    if step is None:
        st.info(
            "This run has no embedding snapshot yet: snapshots are recorded at each "
            "evaluation (diagnostics.eval_every).",
            icon=":material/hourglass_top:",
        )
        return
    snap = data.snapshot(run_id, step)
    if snap.empty:
        st.info(f"No snapshot at step {step}.", icon=":material/info:")
        return
    coords = data.coordinate_columns(snap)
    st.caption(
        f"Step {step}: {len(snap):,} test embeddings, d = {len(coords)}, "
        f"{snap['label'].nunique()} classes"
    )
    vertices = data.head_vertices(record.config, snap)
    left, right = st.columns(2) if wide else (st.container(), st.container())
    with left:
        ui.show_chart(charts.norm_histogram(snap["norm"]))
    with right:
        projected, explained = data.pca(run_id, step)
        ui.show_chart(charts.pca_scatter(projected, explained=explained))
    shown = coords[:MAX_COORDS]
    title = (
        f"First {len(shown)} of {len(coords)} coordinates"
        if len(coords) > len(shown)
        else f"All {len(coords)} coordinates"
    )
    if vertices is not None:
        title += f" · fixed {data.fixed_head(record.config)} vertices (×, scaled to median ‖f‖)"
    ui.show_chart(
        charts.scatter_matrix(
            snap,
            shown,
            vertices=vertices,
            title=title,
            cell=min(110, (480 if wide else 240) // max(len(shown), 1)),
        )
    )
    angles, classes = data.centroid_angles(run_id, step)
    ui.show_chart(charts.angle_heatmap(angles, classes))


def _analysis_metrics(run_id: str) -> None:
    finals = data.final_metrics([run_id])
    if finals.empty:
        return
    table = finals.drop(columns=["run_id", "name"]).T.reset_index()
    table.columns = ["metric", "value"]
    table["metric"] = table["metric"].map(data.metric_key)  # analyses only evaluate
    st.markdown("**Analysis metrics**")
    st.dataframe(table, hide_index=True, width="stretch")


def _analyses(frame: pd.DataFrame) -> None:
    analyses = frame[frame["kind"] == "analysis"] if not frame.empty else frame
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
