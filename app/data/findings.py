"""What the dashboard shows of a run's findings (``db.findings``): the list, the
Runs-table badges, the evidence series."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from app.data.cache import SLOW_LIVE_TTL, STATIC_TTL, store_read
from db import findings as run_findings
from db import queries
from sphere_engine.catalogue.metric import Source
from sphere_engine.findings import Detection, Severity

if TYPE_CHECKING:
    from db.store import RunStore

#: One mark per severity, so a badge reads at a glance in a table cell.
MARKS = {Severity.CRITICAL: "⛔", Severity.WARNING: "⚠️", Severity.INFO: "ℹ️"}
#: Streamlit's box per severity on the Run page.
BOXES = {Severity.CRITICAL: "error", Severity.WARNING: "warning", Severity.INFO: "info"}


@store_read(SLOW_LIVE_TTL)
def findings(store: RunStore, run_id: str) -> list[Detection]:
    """Stored for an ended run; evaluated on what it logged so far for a live one (the
    same rules: ``sphere_engine.findings``), at most every few seconds."""
    return run_findings.run_findings(store, run_id)


def badges(found: list[Detection] | None) -> str:
    """``"⛔ Training diverged · ⚠️ …"``: the Runs table's findings cell."""
    return " · ".join(f"{MARKS[d.severity]} {d.title}" for d in found or [])


def table_badges(frame: pd.DataFrame, live: set[str]) -> list[str]:
    """Badges per row of a ``runs()`` frame: stored findings, or for the ``live`` run ids
    the findings evaluated now."""
    cells = []
    for run_id, info in zip(frame["run_id"], frame["run_info"], strict=True):
        found = findings(run_id) if run_id in live else run_findings.stored_findings(info)
        cells.append(badges(found))
    return cells


@store_read(STATIC_TTL)
def evidence_series(
    store: RunStore, run_id: str, evidence: tuple[tuple[Source, str], ...]
) -> pd.DataFrame:
    """Rows source, name, step, value of a finding's evidence series."""
    train = [key for source, key in evidence if source is Source.TRAINING_BATCH]
    evals = [key for source, key in evidence if source is Source.EVALUATION]
    frames: list[Any] = []
    if train:
        rows = queries.metric_series(store, run_id, train, max_points=1000)
        frames.append(rows.assign(source=Source.TRAINING_BATCH.value))
    if evals:
        rows = queries.eval_series(store, run_id, evals)
        frames.append(rows.assign(source=Source.EVALUATION.value))
    columns = ["source", "name", "step", "value"]
    frames = [f[columns] for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)
