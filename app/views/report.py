"""Report: the declared paper experiments, paper vs measured, from the run store.

The same tables and verdicts as ``spherescope report`` (docs/reproduction.md), with the
key charts: one metric per variant with its seed spread, one panel per dataset (the
paper's values beside the bars only when measured on the same dataset), and for
``sec-losses`` the R@1 gain against the norm-variance drop.
"""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from app.charts.base import number_axis, with_number_text
from app.data import studies
from db.experiment_runs import BY_CONFIG, BY_TAG, experiment_runs, experiment_values
from db.store import RunStore
from sphere_engine.experiments import EXPERIMENT_TAG, EXPERIMENTS, VARIANT_TAG, Experiment
from sphere_engine.experiments.matching import variant_matcher
from sphere_engine.experiments.paper_values import not_run_message, paper_table
from sphere_engine.experiments.studies import STUDY_TITLES
from sphere_engine.experiments.tables import (
    display_table,
    paired_effects,
    pearson,
    summary,
    to_markdown,
)
from sphere_engine.experiments.verdicts import AGREES, DISAGREES, INCONCLUSIVE, check_claims

_ICONS = {
    AGREES: ":material/check_circle:",
    DISAGREES: ":material/cancel:",
    INCONCLUSIVE: ":material/help:",
}


@st.cache_data(ttl=30, show_spinner=False)
def _load(name: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    experiment = EXPERIMENTS[name]
    store = RunStore()
    tag = EXPERIMENT_TAG + name
    runs = experiment_runs(store, tag, VARIANT_TAG, variant_matcher(experiment))
    evals, statistics = experiment.metric_sources()
    values = experiment_values(store, runs, evals, statistics)
    datasets = [((c or {}).get("data") or {}).get("name", "") for c in runs["config"]]
    return runs.assign(dataset=datasets).drop(columns=["config"]), values.assign(dataset=datasets)


def _variant_panels(
    experiment: Experiment, metric: str, runs: pd.DataFrame, values: pd.DataFrame
) -> tuple[list[alt.Chart], str]:
    """One chart per dataset for ``metric`` (a label) and the caption that reads them:
    measured bars with ± one seed std per dataset measured, the paper's values as ticks
    on the bars of its own dataset, or a panel of their own when it was not measured."""
    order = [v.name for v in experiment.variants]
    y = alt.Y("variant:N", sort=order, title=None)
    tables, paper_shown = [], False
    for dataset in sorted(set(runs["dataset"])) or [""]:
        table = summary(experiment, values[values["dataset"] == dataset])
        chosen = table[table["metric"] == metric].assign(
            low=lambda t: t["mean"] - t["std"].fillna(0),
            high=lambda t: t["mean"] + t["std"].fillna(0),
        )
        tables.append((dataset, with_number_text(chosen, ["mean", "std", "paper"])))
    reference = summary(experiment, values.iloc[0:0])
    reference = reference[(reference["metric"] == metric) & reference["paper"].notna()]
    # One x scale for every panel, measured and the paper's: bars side by side compare.
    bounds = [0.0]
    for _, chosen in tables:
        bounds += [*chosen["low"].dropna(), *chosen["high"].dropna(), *chosen["paper"].dropna()]
    bounds += list(reference["paper"].dropna())
    scale = alt.Scale(domain=[min(bounds), max(bounds)], nice=True)

    def x(field: str, title: str) -> alt.X:
        # every layer names the axis the same: Vega-Lite joined their fields ("NMI, low")
        return alt.X(f"{field}:Q", axis=number_axis(title), scale=scale)

    measured = f"{metric}, measured (mean ± seed std)"
    panels = []
    for dataset, chosen in tables:
        base = alt.Chart(chosen).encode(y=y)
        tooltip = [
            "variant",
            alt.Tooltip("mean_text:N", title="mean"),
            alt.Tooltip("std_text:N", title="std"),
            "n",
        ]
        layers = [
            base.mark_bar().encode(x=x("mean", measured), tooltip=tooltip),
            base.mark_errorbar().encode(x=x("low", measured), x2="high:Q"),
        ]
        same = dataset and dataset == experiment.paper_dataset
        if same and chosen["paper"].notna().any():
            paper_shown = True
            ticks = base.transform_filter("isValid(datum.paper)").mark_tick(
                color="#d62728", thickness=3, size=18
            )
            tip = [alt.Tooltip("paper_text:N", title="paper")]
            layers.append(ticks.encode(x=x("paper", measured), tooltip=tip))
        title = f"Measured on {dataset or 'this store’s data'}"
        panels.append(alt.layer(*layers).properties(title=title))
    caption = "Bars: measured mean; whiskers: ± one seed std. One scale for every panel."
    if paper_shown:
        caption += f" Red ticks: the paper's value on {experiment.paper_dataset}."
    elif len(reference):
        where = experiment.paper_dataset or "its own datasets"
        reference = with_number_text(reference, ["paper"])
        panels.append(
            alt.Chart(reference)
            .mark_bar(color="#d62728")
            .encode(
                y=y,
                x=x("paper", f"{metric}, the paper's"),
                tooltip=["variant", alt.Tooltip("paper_text:N", title="paper")],
            )
            .properties(title=f"The paper's values, on {where}")
        )
        caption += f" Red: the paper's values, on {where} (not a dataset measured here)."
    return panels, caption


def _study_result(name: str) -> bool:
    """The result table of the newest study declared for experiment ``name``, if any."""
    study_id = studies.study_for_experiment(name)
    if study_id is None:
        return False
    st.subheader(f"Study {study_id}")
    st.markdown(studies.result_table(study_id)["markdown"].split("\n", 2)[2])
    st.page_link("views/study.py", label="Open the study", icon="🧪",
                 query_params={"study_id": study_id})  # fmt: skip
    return True


def main() -> None:
    st.title("Reproduction report")
    titles = {**{n: e.title for n, e in EXPERIMENTS.items()}, **STUDY_TITLES}
    name = st.selectbox(
        "Experiment",
        list(titles),
        key="report.experiment",
        format_func=lambda n: f"{n}: {titles[n]}",
    )
    if name not in EXPERIMENTS:  # a study preset: its study is the result
        if not _study_result(name):
            st.info(f"No study yet: `spherescope study run {name}` or the Launch page's "
                    "Study mode.", icon=":material/info:")  # fmt: skip
        st.stop()
    experiment = EXPERIMENTS[name]
    st.caption(experiment.description)
    _study_result(name)
    runs, values = _load(name)
    if runs.empty:
        st.info(not_run_message(experiment), icon=":material/info:")
        if any(variant.reference for variant in experiment.variants):
            st.dataframe(paper_table(experiment), hide_index=True, width="stretch")
        st.stop()
    steps = ", ".join(f"{s:,}" for s in sorted(set(runs["steps"])))
    seeds = " ".join(str(s) for s in sorted(set(runs["seed"])))
    st.markdown(f"{len(runs)} runs · steps {steps} · seeds {seeds} · mean ± std over seeds")
    st.dataframe(display_table(experiment, values), hide_index=True, width="stretch")
    tagged = int((runs["found_by"] == BY_TAG).sum())
    with st.expander(
        f"The {len(runs)} runs used: {tagged} tagged for it, {len(runs) - tagged} whose "
        "config matches a variant (newest per variant and seed)"
    ):
        # as text, not a grid: the ids can be read, searched and copied
        used = runs.assign(
            found_by=runs["found_by"].map(_FOUND_BY),
        )
        columns = ["run_id", "name", "variant", "seed", "steps", "dataset", "found_by"]
        st.markdown(to_markdown(used[columns]))

    st.subheader("Claims")
    for verdict in check_claims(experiment, values):
        icon = _ICONS.get(verdict.verdict, ":material/radio_button_unchecked:")
        st.markdown(f"{icon} **{verdict.verdict}**: {verdict.claim.text}")
        st.caption(verdict.detail)

    st.subheader("Per variant")
    labels = [m.label for m in experiment.metrics]
    metric = st.selectbox("Metric", labels, key="report.metric")
    panels, caption = _variant_panels(experiment, metric, runs, values)
    for panel in panels:  # one chart each: a stretched vconcat was cut at the page's edge
        st.altair_chart(panel, width="stretch")
    st.caption(caption)

    if "loss_pairs" in experiment.analyses:
        pairs = paired_effects(experiment, values)
        if not pairs.empty:
            r, n = pearson(pairs["variance_drop"], pairs["r1_gain"])
            st.subheader(f"R@1 gain vs norm-variance drop (r = {r:.2f}, n = {n})")
            pairs = with_number_text(pairs, ["variance_drop", "r1_gain"])
            scatter = (
                alt.Chart(pairs)
                .mark_circle(size=70)
                .encode(
                    x=alt.X("variance_drop:Q", axis=number_axis("training norm-variance drop")),
                    y=alt.Y("r1_gain:Q", axis=number_axis("R@1 gain (points)")),
                    color=alt.Color("pair:N", title="loss"),
                    tooltip=[
                        "pair",
                        "seed",
                        alt.Tooltip("variance_drop_text:N", title="drop"),
                        alt.Tooltip("r1_gain_text:N", title="R@1 gain"),
                    ],
                )
            )
            st.altair_chart(scatter, width="stretch")


_FOUND_BY = {BY_TAG: "tagged", BY_CONFIG: "config matches"}

main()
