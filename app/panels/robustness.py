"""The robustness panel: accuracy (classifier heads) or R@1 against a clean gallery
(pair losses) as a function of ε, per attack, overlaid across runs."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from app import data, ui
from app.panels.curve_charts import robustness_chart


def show(run_ids: Sequence[str], labels: dict[str, str] | None = None) -> None:
    """Draw the panel when some run logged robustness values; nothing otherwise."""
    values = data.robustness_values(list(run_ids))
    if values.empty:
        return
    st.subheader("Adversarial robustness")
    metrics = sorted(values["metric"].unique())
    for column, metric in zip(st.columns(len(metrics)), metrics, strict=True):
        with column:
            ui.show_chart(robustness_chart(values, metric, labels))
    st.caption(
        "L∞ attacks on the test split at the last evaluation that ran them (ε in pixel "
        "units, inputs kept in [0, 1]); ε = 0 is the clean value."
    )
