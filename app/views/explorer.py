"""Retrieval explorer: one evaluation step's failing queries, their nearest neighbours,
per-class Recall@1 and the most confused class pairs (``db.query_results``)."""

from __future__ import annotations

import streamlit as st

from app import ui
from app.data import explorer
from app.panels.neighbour_strip import STYLE, strip_html
from app.panels.run_picker import pick_runs
from sphere_engine.catalogue.facts import WORST_QUERIES

WORST_COUNT = WORST_QUERIES  # the evaluation drew these queries' thumbnails


def main() -> None:
    st.title("Retrieval explorer")
    # -- widgets ---------------------------------------------------------------------
    (run_id,) = pick_runs(["explorer.run"], run_params=["step"])
    # -- empty state -----------------------------------------------------------------
    if not run_id:
        ui.empty_state("No runs yet: train one; its evaluations store each query's neighbours.")
    steps = explorer.evaluation_steps(run_id)
    asked = ui.query_param("step")
    if asked is not None and (not asked.isdigit() or int(asked) not in steps):
        # a link to a step without per-query results: say which steps have them
        st.warning(
            f"Step {asked} has no per-query evaluation; steps with one: "
            f"{', '.join(map(str, steps)) or 'none'}.",
            icon=":material/warning:",
        )
    if not steps:
        st.info(
            "This run stored no per-query results (they are written at each evaluation).",
            icon=":material/info:",
        )
        st.stop()
    initial = int(asked) if asked and asked.isdigit() and int(asked) in steps else steps[-1]
    step = st.select_slider("Evaluation step", steps, value=initial, key="explorer.step")
    by = st.radio("Worst queries by", list(explorer.WORST_BY), horizontal=True, key="explorer.by")
    # -- data ------------------------------------------------------------------------
    rows = explorer.queries(run_id, step)
    per_class = explorer.classes(run_id, step)
    names = explorer.class_names(per_class)
    # -- tables ----------------------------------------------------------------------
    st.subheader(f"The {WORST_COUNT} worst queries")
    st.caption(
        f"{len(rows):,} queries scored at step {step:,}; each with its nearest neighbours "
        "(✓ green: same class, ✗ red: another class), their cosine similarities and the "
        "norms ‖f‖ of the raw embeddings. Samples without a stored image show their id."
    )
    worst = explorer.worst_queries(rows, by, WORST_COUNT)
    images = explorer.thumbnails(run_id, explorer.shown_samples(worst))
    st.html(STYLE)
    for _, row in worst.iterrows():
        name = names.get(int(row["label"]), str(row["label"]))
        st.markdown(
            f"**query {row['query']}** · class `{name}` · R@1 {'hit' if row['hit@1'] else 'miss'}"
            f" · AP@R {row['ap@r']:.3f} · {row['positives']} positives"
        )
        strip = explorer.neighbour_strip(row, names)
        norm = float(row["norm"]) if "norm" in row and row["norm"] == row["norm"] else float("nan")
        st.html(strip_html(int(row["query"]), name, norm, strip, images))
        with st.expander("as a table"):
            st.dataframe(
                strip.assign(correct=strip["correct"].map({True: "✓ same", False: "✗ other"})),
                hide_index=True,
                width="stretch",
                column_config={
                    "similarity": st.column_config.NumberColumn("similarity", format="%.3f"),
                    "norm": st.column_config.NumberColumn("norm ‖f‖", format="%.3g"),
                },
            )
    left, right = st.columns(2)
    with left:
        st.subheader("Recall@1 per class")
        table = per_class.assign(
            **{"class": [names.get(int(label), str(label)) for label in per_class["label"]]}
        )
        st.dataframe(  # sortable by any column in the browser (click its header)
            table[["class", "samples", "queries", "recall@1", "map@r"]].sort_values("recall@1"),
            hide_index=True,
            width="stretch",
            key="explorer.classes",
        )
    with right:
        st.subheader("Most confused class pairs")
        st.dataframe(
            explorer.confused_pairs(rows, names),
            hide_index=True,
            width="stretch",
            column_config={"share": st.column_config.NumberColumn("share", format="%.2f")},
        )


ui.run_page(main)
