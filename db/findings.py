"""Findings of a run read from the store: evaluated on its logged series
(``sphere_engine.findings``), stored in the run's info at its end, read back by the
dashboard, the CLI and the report.

A finished run's findings are the stored list (computed once, from every series at
full resolution up to ``MAX_POINTS``, and again when read under newer rules); a live
run's are evaluated on read, on the same rules, from what it has logged so far.

A run whose result cannot be trusted is one with a critical finding (diverged, never
learned, collapsed to a point): ``untrusted`` says so, and rankings leave it out unless
asked.
"""

from __future__ import annotations

import logging
from typing import Any

import pandas as pd

from db import queries
from db.records import TERMINAL
from db.store import RunStore
from sphere_engine.catalogue.metric import Source
from sphere_engine.findings import (
    RULES_VERSION,
    Detection,
    RunSeries,
    Severity,
    evaluate_findings,
    read_keys,
)

log = logging.getLogger(__name__)

#: The run-info keys the findings and the rules' version they were evaluated under are
#: stored under.
INFO_KEY = "findings"
VERSION_KEY = "findings_version"
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
    store.update_run_info(
        run_id, {INFO_KEY: [d.to_dict() for d in found], VERSION_KEY: RULES_VERSION}
    )
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


def stored_current(run_info: dict[str, Any] | None) -> bool:
    """Whether the stored findings were evaluated under the rules of this version."""
    return (run_info or {}).get(VERSION_KEY) == RULES_VERSION


def run_findings(store: RunStore, run_id: str) -> list[Detection]:
    """A run's findings: stored ones for an ended run (evaluated and stored again once
    if the rules changed since), evaluated now for a live one."""
    record = store.get_run(run_id)
    stored = stored_findings(record.run_info)
    if record.status not in TERMINAL:
        return evaluate_run(store, run_id)
    if stored is not None and stored_current(record.run_info):
        return stored
    try:
        return record_findings(store, run_id)
    except OSError as error:  # a read-only or full store: say it, show what it says now
        log.warning("run %s: findings not stored again: %s", run_id, error)
        return evaluate_run(store, run_id)


def untrusted(found: list[Detection] | None) -> bool:
    """A critical finding fired: the run's result cannot be trusted."""
    return any(d.severity is Severity.CRITICAL for d in found or [])


def untrusted_reasons(found: list[Detection] | None) -> list[str]:
    """The titles of the critical findings (why the run cannot be trusted)."""
    return [d.title for d in found or [] if d.severity is Severity.CRITICAL]


def run_untrusted(run_info: dict[str, Any] | None) -> bool:
    """``untrusted`` from the findings stored in a run's info (False when none)."""
    return untrusted(stored_findings(run_info))


def findings_frame(found: list[Detection]) -> pd.DataFrame:
    """One row per finding: name, title, severity, message, step_start, step_end, action,
    as_of (the last logged step it was evaluated at)."""
    columns = [
        "name", "title", "severity", "message", "step_start", "step_end", "action", "as_of",
    ]  # fmt: skip
    rows = [{k: v for k, v in d.to_dict().items() if k in columns} for d in found]
    return pd.DataFrame(rows, columns=columns)
