"""The Run page's downloads: the run's logged values as CSV, Parquet or TensorBoard logs.

The same files as ``spherescope export`` (``db.run_export``), zipped: per-step scalars,
evaluations and tracked-sample norms; or TensorBoard event files in a ``<run_id>/``
folder (unzip, then ``tensorboard --logdir .``).
"""

from __future__ import annotations

import streamlit as st

from app.data.cache import LIST_TTL, store_read
from db.run_export import export_zip

FORMATS = {
    "csv": "CSV (scalars, evaluations, sample norms)",
    "parquet": "Parquet (scalars, evaluations, sample norms)",
    "tensorboard": "TensorBoard event files",
}

_zipped = store_read(LIST_TTL, max_entries=8)(export_zip)


def downloads(run_id: str) -> None:
    """An expander with a format choice and one download button for run ``run_id``."""
    with st.expander("Download this run"):
        fmt = st.radio(
            "Format",
            list(FORMATS),
            horizontal=True,
            key="run.download_format",
            format_func=FORMATS.__getitem__,
        )
        try:
            payload = _zipped(run_id, fmt)
        except ValueError as error:  # e.g. tensorboard not installed
            st.info(str(error), icon=":material/info:")
            return
        st.download_button(
            f"Download {fmt} (zip)",
            payload,
            file_name=f"{run_id}-{fmt}.zip",
            mime="application/zip",
            key="run.download",
        )
