"""Report: the declared paper experiments, paper vs measured, from the run store.

The same tables and verdicts as ``spherescope report`` (docs/reproduction.md), with the
key charts: one metric per variant with its seed spread, and for ``sec-losses`` the R@1
gain against the norm-variance drop.
"""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from app.panels import claim_evidence
from db.experiment_runs import experiment_runs, experiment_values
from db.store import RunStore
from sphere_engine.experiments import (
    EXPERIMENT_TAG,
    EXPERIMENTS,
    VARIANT_TAG,
)
from sphere_engine.experiments.paper_values import not_run_message, paper_table
from sphere_engine.experiments.tables import (
    check_claims,
    display_table,
    paired_effects,
    pearson,
    summary,
)

_ICONS = {"agrees": ":material/check_circle:", "disagrees": ":material/cancel:"}


@st.cache_data(ttl=30, show_spinner=False)
def _load(name: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    experiment = EXPERIMENTS[name]
    store = RunStore()
    runs = experiment_runs(store, EXPERIMENT_TAG + name, VARIANT_TAG)
    evals, statistics = experiment.metric_sources()
    values = experiment_values(store, runs, evals, statistics)
    datasets = [((c or {}).get("data") or {}).get("name", "") for c in runs["config"]]
    return runs.assign(dataset=datasets).drop(columns=["config"]), values


def main() -> None:
    st.title("Reproduction report")
    name = st.selectbox(
        "Experiment",
        list(EXPERIMENTS),
        key="report.experiment",
        format_func=lambda n: f"{n}: {EXPERIMENTS[n].title}",
    )
    experiment = EXPERIMENTS[name]
    st.caption(experiment.description)
    runs, values = _load(name)
    if runs.empty:
        st.info(not_run_message(experiment), icon=":material/info:")
        if any(variant.reference for variant in experiment.variants):
            st.dataframe(paper_table(experiment), hide_index=True, width="stretch")
        st.stop()
    steps = ", ".join(str(s) for s in sorted(set(runs["steps"])))
    seeds = " ".join(str(s) for s in sorted(set(runs["seed"])))
    st.markdown(f"{len(runs)} runs · steps {steps} · seeds {seeds} · mean ± std over seeds")
    st.dataframe(display_table(experiment, values), hide_index=True, width="stretch")
    with st.expander(f"The {len(runs)} runs used (every finished run tagged for it)"):
        used = [c for c in ("run_id", "variant", "seed", "steps", "dataset") if c in runs]
        st.dataframe(runs[used], hide_index=True, width="stretch")

    st.subheader("Claims")
    scales = {m.key: 100.0 if m.percent else 1.0 for m in experiment.metrics}
    for verdict in check_claims(experiment, values):
        shown, found = claim_evidence.judged(verdict.verdict, verdict.claim, values, scales)
        icon = _ICONS.get(shown, ":material/help:")
        st.markdown(f"{icon} **{shown}**: {verdict.claim.text} — {verdict.detail}")
        st.caption(" · ".join(e.text() for e in found))

    st.subheader("Per variant")
    labels = [m.label for m in experiment.metrics]
    metric = st.selectbox("Metric", labels, key="report.metric")
    table = summary(experiment, values)
    chosen = table[table["metric"] == metric].assign(
        low=lambda t: t["mean"] - t["std"].fillna(0), high=lambda t: t["mean"] + t["std"].fillna(0)
    )
    order = [v.name for v in experiment.variants]
    measured_on = ", ".join(sorted(set(runs["dataset"]) - {""})) or "this store's data"
    base = alt.Chart(chosen).encode(y=alt.Y("variant:N", sort=order, title=None))
    bars = base.mark_bar().encode(x=alt.X("mean:Q", title=metric), tooltip=["mean", "std", "n"])
    spread = base.mark_errorbar().encode(x="low:Q", x2="high:Q")
    measured = (bars + spread).properties(title=f"Measured on {measured_on}")
    # The paper's values in their own panel: its datasets are not the ones measured here
    # (its ticks beside another dataset's bars read as a comparison they are not).
    paper_values = chosen.dropna(subset=["paper"])
    if paper_values.empty:
        st.altair_chart(measured, width="stretch")
    else:
        paper = (
            alt.Chart(paper_values)
            .mark_bar(color="#d62728")
            .encode(
                y=alt.Y("variant:N", sort=order, title=None),
                x=alt.X("paper:Q", title=f"{metric} (paper)"),
            )
            .properties(title="The paper's values (its own datasets)")
        )
        st.altair_chart(alt.vconcat(measured, paper), width="stretch")
    st.caption("Bars: measured mean; whiskers: ± one seed std; below: the paper's value.")

    if "loss_pairs" in experiment.analyses:
        pairs = paired_effects(experiment, values)
        if not pairs.empty:
            r, n = pearson(pairs["variance_drop"], pairs["r1_gain"])
            st.subheader(f"R@1 gain vs norm-variance drop (r = {r:.2f}, n = {n})")
            scatter = (
                alt.Chart(pairs)
                .mark_circle(size=70)
                .encode(
                    x=alt.X("variance_drop:Q", title="training norm-variance drop"),
                    y=alt.Y("r1_gain:Q", title="R@1 gain (points)"),
                    color=alt.Color("pair:N", title="loss"),
                    tooltip=["pair", "seed", "variance_drop", "r1_gain"],
                )
            )
            st.altair_chart(scatter, width="stretch")


main()
