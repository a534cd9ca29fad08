"""The model exports of a run (``spherescope export-model``) as a table for the Run page."""

from __future__ import annotations

import pandas as pd

from app.data.cache import LIST_TTL, store_read
from db.model_exports import model_exports as recorded_exports
from db.store import RunStore

COLUMNS = [
    "created", "format", "step", "output", "weights", "max 1 − cos",
    "largest metric gap (points)", "metric", "check", "file",
]  # fmt: skip


@store_read(LIST_TTL)
def model_exports(store: RunStore, run_id: str) -> pd.DataFrame:
    """One row per export, newest first: what was exported and its check's numbers."""
    rows = []
    for entry in recorded_exports(store.files, run_id):
        check = entry.get("check") or {}
        gaps = {
            name: gap for name, gap in (check.get("metric_gaps") or {}).items() if gap is not None
        }
        worst = max(gaps, key=gaps.__getitem__) if gaps else ""
        rows.append(
            {
                "created": pd.to_datetime(entry.get("created_at"), unit="s", utc=True),
                "format": entry.get("format", ""),
                "step": entry.get("step"),
                "output": "L2-normalised" if entry.get("normalized") else "raw",
                "weights": entry.get("weights", ""),
                "max 1 − cos": check.get("max_one_minus_cos"),
                "largest metric gap (points)": gaps[worst] * 100 if worst else None,
                "metric": worst,
                "check": "passed" if check.get("passed") else "FAILED",
                "file": entry.get("file", ""),
            }
        )
    frame = pd.DataFrame(rows, columns=COLUMNS)
    return frame.iloc[::-1].reset_index(drop=True)
