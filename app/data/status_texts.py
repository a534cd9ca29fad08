"""The run lifecycle as the user reads it, declared once: what a page says about a run
that has nothing to draw yet, and where a queued run waits.

Every text follows from the run's status and kind (a training run or the analysis of
a file) and, for a queued run, from whether a live worker serves its queue, so no
page says "a queued run starts when a worker is free" about a failed run or a
finished analysis.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

GPU_QUEUE = "gpu"

#: Status → what the page says when a training run has no metrics (yet).
NO_METRICS_TEXT = {
    "queued": "Queued: it starts when a worker serving its queue is free; the first "
    "points appear a few seconds after it starts.",
    "running": "Running: the first points appear a few seconds after its first logged step.",
    "finished": "The run finished without logging per-step metrics.",
    "failed": "The run failed before it logged any metric (the reason is above).",
    "lost": "The run was lost (its worker stopped answering) before it logged any metric.",
    "cancelled": "The run was cancelled before it logged any metric.",
}
#: Status → the same for the analysis of a file (it has no training steps at all).
ANALYSIS_TEXT = {
    "queued": "Queued: the analysis starts when a worker is free.",
    "running": "Analysing the file: its results appear when the analysis finishes.",
    "finished": "An analysis records evaluation results and embeddings, not training "
    "steps: compare its results on the Compare page and see its embeddings on Geometry.",
    "failed": "The analysis failed (the reason is above).",
    "lost": "The analysis was lost (its worker stopped answering).",
    "cancelled": "The analysis was cancelled.",
}
NO_GPU_WORKER_TEXT = (
    "Waiting in the gpu queue, but no live worker serves it (training.device = cuda): "
    "start a GPU worker (`spherescope worker` on a machine with a GPU), or cancel and "
    "launch it again with device auto or cpu."
)


@st.cache_data(ttl=5, show_spinner=False)
def gpu_worker_alive() -> bool | None:
    """Whether a live worker serves the gpu queue (None: no broker to ask)."""
    import worker

    return worker.gpu_worker_alive()


def _get(record: Any, key: str) -> Any:
    return record.get(key) if isinstance(record, (dict, pd.Series)) else getattr(record, key)


def _device(record: Any) -> str | None:
    config = _get(record, "config") or {}
    return (config.get("training") or {}).get("device") if isinstance(config, dict) else None


def waiting_note(record: Any) -> str | None:
    """Why a queued run does not start, when that is known: its queue has no live
    worker. Asks the broker only for queued ``cuda`` runs."""
    if _get(record, "status") != "queued" or _device(record) != "cuda":
        return None
    return NO_GPU_WORKER_TEXT if gpu_worker_alive() is False else None


def no_metrics_message(record: Any) -> str:
    """What to say about a run that has no per-step metrics to draw."""
    status = str(_get(record, "status"))
    if _get(record, "kind") == "analysis":
        return ANALYSIS_TEXT.get(status, f"The analysis is {status}.")
    return waiting_note(record) or NO_METRICS_TEXT.get(status, f"The run is {status}.")
