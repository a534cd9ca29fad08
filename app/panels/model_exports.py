"""The Run page's model exports: each file ``spherescope export-model`` wrote for the
run and its parity check (exported vs PyTorch embeddings and metrics)."""

from __future__ import annotations

import streamlit as st

from app.data.model_exports import model_exports as export_table

HOW = "spherescope export-model {run_id} --format onnx --out model.onnx"


def model_exports(run_id: str) -> None:
    """An expander listing the run's exported models, newest first."""
    table = export_table(run_id)
    failed = int((table["check"] == "FAILED").sum())
    title = f"Model exports ({len(table)}{f', {failed} failed' if failed else ''})"
    with st.expander(title):
        if table.empty:
            st.caption("None yet. Export the embedding model with its accuracy checked:")
            st.code(HOW.format(run_id=run_id), language="bash")
            return
        st.caption(
            "Each file was checked on the run's evaluated test samples, fed inputs computed "
            "from its own metadata: max 1 − cos against PyTorch ≤ 1e-5 and every metric "
            "within 0.1 point (fp32); fp16 rows show the measured drop."
        )
        st.dataframe(
            table,
            hide_index=True,
            column_config={"max 1 − cos": st.column_config.NumberColumn(format="%.2e")},
        )
