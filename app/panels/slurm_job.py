"""The Run page's lines about a SLURM run: its job, partition and limits, what SLURM
says of it while it waits, and its requeues (texts from ``app.data.executor``)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from app.data.cache import home
from app.data.executor import is_slurm, limits_text, requeue_text, scheduler_note
from app.data.slurm_states import refresh_slurm_states


def show(record: Any) -> None:
    """Nothing for a run that is not a SLURM job."""
    if not is_slurm(record):
        return
    refresh_slurm_states(str(home()))  # what is shown next time is SLURM's latest word
    executor = record.executor
    st.caption(
        f"Runs on SLURM: job {executor.get('job_id') or '?'} · partition "
        f"{executor.get('partition') or '?'} · {limits_text(record)}"
    )
    note = scheduler_note(record)
    if note:
        st.info(note, icon=":material/schedule:")
    requeued = requeue_text(record)
    if requeued:
        st.info(requeued, icon=":material/replay:")
