"""Findings of a run read from the store: evaluated on its logged series
(``sphere_engine.findings``), stored in the run's info at its end, read back by the
dashboard, the CLI and the report.

A finished run's findings are the stored list (computed once, from every series at
full resolution up to ``MAX_POINTS``); a live run's are evaluated on read, on the same
rules, from what it has logged so far.
"""

from __future__ import annotations

import logging
from typing import Any

import pandas as pd

from db import queries
from db.records import TERMINAL
from db.store import RunStore
from sphere_engine.catalogue.metric import Source
from sphere_engine.findings import Detection, RunSeries, evaluate_findings, read_keys

log = logging.getLogger(__name__)

#: The run-info key the findings are stored under.
INFO_KEY = "findings"
# Enough points to see a stretch of dead steps or a spike (the rules read trends, and
# a downsampled bucket keeps its last value, so a NaN at the end survives).
MAX_POINTS = 2000


def run_series(store: RunStore, run_id: str) -> RunSeries:
    """The series every finding reads, for one run."""
    keys = read_keys()
    train = [key for source, key in keys if source is Source.TRAINING_BATCH]
    evals = [key for source, key in keys if source is Source.EVALUATION]
    scalars = queries.metric_series(store, run_id, train, max_points=MAX_POINTS)
    evaluations = queries.eval_series(store, run_id, evals)
    return RunSeries.from_long(scalars, evaluations, store.get_run(run_id).config)


def evaluate_run(store: RunStore, run_id: str) -> list[Detection]:
    """The findings that fire on what ``run_id`` has logged so far."""
    return evaluate_findings(run_series(store, run_id))


def record_findings(store: RunStore, run_id: str) -> list[Detection]:
    """Evaluate and store the findings with the run (its info's ``findings``)."""
    found = evaluate_run(store, run_id)
    store.update_run_info(run_id, {INFO_KEY: [d.to_dict() for d in found]})
    return found


def record_findings_quietly(store: RunStore, run_id: str) -> None:
    """``record_findings`` at a run's end: a diagnosis never fails the run it diagnoses."""
    try:
        record_findings(store, run_id)
    except OSError as error:  # a full disk: the run's end says so, in one line
        log.warning("run %s: findings not stored: %s", run_id, error)
    except Exception:
        log.exception("run %s: findings could not be evaluated", run_id)


def stored_findings(run_info: dict[str, Any] | None) -> list[Detection] | None:
    """The findings stored in a run's info; ``None`` when none were stored."""
    stored = (run_info or {}).get(INFO_KEY)
    if not isinstance(stored, list):
        return None
    return [Detection.from_dict(item) for item in stored if isinstance(item, dict)]


def run_findings(store: RunStore, run_id: str) -> list[Detection]:
    """A run's findings: stored ones for an ended run, evaluated now for a live one."""
    record = store.get_run(run_id)
    stored = stored_findings(record.run_info)
    if record.status in TERMINAL and stored is not None:
        return stored
    return evaluate_run(store, run_id)


def findings_frame(found: list[Detection]) -> pd.DataFrame:
    """One row per finding: name, title, severity, message, step_start, step_end, action."""
    columns = ["name", "title", "severity", "message", "step_start", "step_end", "action"]
    rows = [{k: v for k, v in d.to_dict().items() if k in columns} for d in found]
    return pd.DataFrame(rows, columns=columns)
