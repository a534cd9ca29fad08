"""The verification panel: the ROC (log-scaled FAR axis) and the TAR@FAR table of one or
several runs (Run page: one run; Compare: overlaid)."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from app import data, ui
from app.panels.curve_charts import roc_chart, tar_table
from sphere_engine.catalogue import Source, column_key

TABLE_KEYS = ("verification/eer", "verification/auc", "verification/accuracy")


def show(run_ids: Sequence[str], labels: dict[str, str] | None = None) -> None:
    """Draw the panel when some run logged verification metrics; nothing otherwise."""
    run_ids = list(run_ids)
    names = [n for n in data.eval_names(run_ids) if n.startswith("verification/")]
    if not names:
        return
    st.subheader("Verification (face-recognition protocol)")
    curves = data.roc_curves(run_ids)
    if len(curves):
        ui.show_chart(roc_chart(curves, labels))
    wanted = [n for n in names if n.startswith("verification/tar@far=") or n in TABLE_KEYS]
    finals = data.final_metrics(run_ids, [column_key(Source.EVALUATION, n) for n in wanted])
    st.dataframe(tar_table(finals, labels), hide_index=True, width="stretch")
    st.caption(
        "Cosine scores of genuine (same class) and impostor pairs at the last evaluation. "
        "TAR@FAR is empty where the impostor pairs cannot resolve that FAR (fewer than "
        "10 / FAR). Accuracy: 10-fold, threshold chosen on 9 folds."
    )
