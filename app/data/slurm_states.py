"""The dashboard asks SLURM itself about its SLURM runs (at most every
``REFRESH_S`` seconds, for every page together): on a login node the dashboard may run
without any worker, whose reaper would otherwise be the one to ask (``worker.submit``:
pending reasons recorded, runs whose job ended closed with SLURM's reason)."""

from __future__ import annotations

import logging
import shutil

import streamlit as st

from app.data.cache import store

log = logging.getLogger(__name__)
REFRESH_S = 10


@st.cache_data(ttl=REFRESH_S, show_spinner=False)
def refresh_slurm_states(home: str) -> None:
    """One pass over the store at ``home`` (its cache key); nothing without ``squeue``."""
    if shutil.which("squeue") is None:
        return
    from worker.submit import refresh_slurm_states as refresh

    try:
        refresh(store())
    except Exception:  # a page must not fail because SLURM did not answer
        log.exception("SLURM states not refreshed")
