"""Study: one study's search and result, live while it runs — per arm its trials (state,
parameters, fold values, objective, why pruned), the optimisation history, parameter
importances and parallel coordinates, the budget used, and the result table."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import ui
from app.charts import study as charts
from app.data import studies

LIVE_S = 2.0
STUDY_PARAM = "study_id"


def _pick_study(ids: list[str]) -> str | None:
    wanted = st.query_params.get(STUDY_PARAM)
    index = ids.index(wanted) if wanted in ids else 0
    chosen = st.selectbox("Study", ids, index=index, key="study.id")
    if chosen and chosen != wanted:
        st.query_params[STUDY_PARAM] = chosen
    return chosen


def _budget(status: dict) -> None:
    columns = st.columns(max(1, len(status["arms"])))
    for column, (arm, info) in zip(columns, status["arms"].items(), strict=False):
        asked, budget = info["asked"], info["budget"]
        column.metric(f"{arm}: trials", f"{asked} / {budget}")
        column.progress(min(1.0, asked / budget) if budget else 0.0)
        states = ", ".join(f"{n} {s}" for s, n in sorted(info["trials"].items()))
        column.caption(f"{states or 'none yet'}; {info['runs_in_flight']} runs in flight")


def _arm(study_id: str, arm: str, trials: pd.DataFrame, metric: str) -> None:
    mine = trials[trials["arm"] == arm]
    st.dataframe(
        mine.drop(columns=["arm"]),
        hide_index=True,
        width="stretch",
        column_config={"objective": st.column_config.NumberColumn(format="%.4f")},
    )
    completed = int((mine["state"] == "complete").sum())
    if not completed:
        st.caption("No completed trial yet: the charts appear with the first.")
        return
    left, right = st.columns(2)
    left.altair_chart(charts.history(mine, metric), width="stretch")
    importances = studies.importances(study_id, arm, completed)
    if importances:
        right.altair_chart(charts.importance_bars(importances), width="stretch")
    else:
        right.caption("Parameter importances need two completed trials with parameters.")
    params = studies.trial_params(study_id, arm)
    if len(params.columns) > 2:
        st.altair_chart(charts.parallel_coordinates(params), width="stretch")


def _content(study_id: str) -> None:
    status = studies.study_status(study_id)
    spec = studies.study_spec(study_id)
    st.caption(
        f"**{status['state']}** · objective: validation {spec['metric']} averaged over "
        f"{spec['folds']} fold(s) · sampler {spec['sampler']} (seed {spec['seed']}) · "
        f"{spec['reproductions']} reproductions per arm · {status['runs']} runs"
        + (f" · experiment `{spec['experiment']}`" if spec.get("experiment") else "")
    )
    _budget(status)
    st.subheader("Result")
    table = studies.result_table(study_id)
    st.markdown(table["markdown"].split("\n", 2)[2])
    st.subheader("Trials")
    trials = studies.trials(study_id)
    tabs = st.tabs(list(status["arms"]))
    for tab, arm in zip(tabs, status["arms"], strict=True):
        with tab:
            _arm(study_id, arm, trials, spec["metric"])


def main() -> None:
    st.title("Study")
    ids = studies.study_ids()
    if not ids:
        st.info(
            "No study yet. Start one from the Launch page (Study mode) or with "
            "`spherescope study run STUDY.toml`.",
            icon=":material/info:",
        )
        st.stop()
    study_id = _pick_study(ids)
    live = studies.study_status(study_id)["state"] in ("running", "stopped")

    @st.fragment(run_every=LIVE_S if live else None)
    def live_part() -> None:
        _content(study_id)

    live_part()


ui.run_page(main)
