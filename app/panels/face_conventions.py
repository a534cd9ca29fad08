"""A face analysis's two conventions side by side (Geometry page, analysis runs).

``spherescope analyze`` records the face metrics read with the chosen convention
(``analysis.convention`` in the run's config) and the other convention's values under
``<family>/<other>/<metric>`` (``sphere_engine.metrics.face.conventions``; read here
from the keys alone, so the page imports no engine code). The panel shows a row per
metric whose two values differ, and nothing when none do.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd
import streamlit as st

from app import data


def side_by_side(metrics: Mapping[str, float], chosen: str) -> pd.DataFrame:
    """metric | <chosen> | <other> for each metric recorded under both conventions
    whose two values differ (two missing values do not)."""
    rows = []
    for key, other_value in sorted(metrics.items()):
        family, _, rest = key.partition("/")
        other, _, name = rest.partition("/")
        main = f"{family}/{name}"
        if not name or main not in metrics or other == chosen:
            continue
        value = metrics[main]
        both_missing = _missing(value) and _missing(other_value)
        if both_missing or value == other_value:
            continue
        rows.append({"metric": main, chosen: value, other: other_value})
    return pd.DataFrame(rows)


def _missing(value: float | None) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def show(run_id: str) -> None:
    """The side-by-side table of a face analysis run, when its conventions differ."""
    chosen = data.run(run_id).config.get("analysis", {}).get("convention")
    if not chosen:
        return
    finals = data.final_metrics([run_id])
    if finals.empty:
        return
    metrics = {data.metric_key(c): finals[c].iloc[0] for c in finals.columns[2:]}
    table = side_by_side(metrics, chosen)
    if table.empty:
        return
    st.markdown("**Face conventions side by side**")
    st.dataframe(table, hide_index=True, width="stretch")
    st.caption(
        f"Computed with --convention {chosen} (the analysis's metrics above). bounded: the "
        "largest rate with at most floor(f·m) false accepts; insightface: the ROC point "
        "nearest f, floor(f·m) − 1 false alarms, the 0.01 squared-distance grid."
    )
