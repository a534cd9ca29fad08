"""The Run page's downloads: the run's logged values as CSV, Parquet or TensorBoard logs.

The same files as ``spherescope export`` (``db.run_export``), zipped: per-step scalars,
evaluations and tracked-sample norms; or TensorBoard event files in a ``<run_id>/``
folder (unzip, then ``tensorboard --logdir .``).
"""

from __future__ import annotations

import functools
import importlib.util

import streamlit as st

from app.data.cache import store
from db.run_export import export_zip
from db.tensorboard_export import MISSING

FORMATS = {
    "csv": "CSV (scalars, evaluations, sample norms)",
    "parquet": "Parquet (scalars, evaluations, sample norms)",
    "tensorboard": "TensorBoard event files",
}


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
        if fmt == "tensorboard" and importlib.util.find_spec("tensorboard") is None:
            st.info(MISSING, icon=":material/info:")
            return
        # A callable: the archive is built when the button is clicked. Built on every
        # run of the page, it was the whole run exported at each page load and widget
        # change (3.8 s of CPU and a 27 MB zip held per session for a 60k-step run,
        # growing with a live run, and costing its training the same).
        st.download_button(
            f"Download {fmt} (zip)",
            functools.partial(_archive, run_id, fmt),
            file_name=f"{run_id}-{fmt}.zip",
            mime="application/zip",
            key="run.download",
        )


def _archive(run_id: str, fmt: str) -> bytes:
    return export_zip(store(), run_id, fmt)
