"""What the dashboard shows of a run's findings (``db.findings``): the list, the
Runs-table badges, the evidence series."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

import pandas as pd

from app.data.cache import SLOW_LIVE_TTL, STATIC_TTL, home, store_read
from db import findings as run_findings
from db import queries
from db.records import TERMINAL
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


#: A live run's findings in the Runs table are evaluated again once it has logged past
#: the step they were evaluated at, or after this many seconds (a run that reports no
#: progress): each evaluation reads the run's series (~0.06 s), and a table of many
#: running runs re-read them all whenever its caches expired (3.6 s with 50 running).
LIVE_FINDINGS_MAX_AGE_S = 30.0
_live_lock = threading.Lock()
#: (home, run_id) → (progress step, when evaluated, findings)
_live: dict[tuple[str, str], tuple[int | None, float, list[Detection]]] = {}


def live_findings(run_id: str, step: object) -> list[Detection]:
    """``findings`` of a running run at its logged ``step``, kept while it logs nothing new."""
    at = None if step is None or pd.isna(step) else int(step)  # type: ignore[arg-type]
    key, now = (str(home()), run_id), time.monotonic()
    with _live_lock:
        hit = _live.get(key)
    if hit is not None and hit[0] == at and now - hit[1] < LIVE_FINDINGS_MAX_AGE_S:
        return hit[2]
    found = findings(run_id)
    with _live_lock:
        _live[key] = (at, now, found)
        # an entry this old is evaluated again when next asked for: dropping it loses
        # nothing, and runs that ended (no longer asked for) leave the memo
        for stale in [
            k for k, (_, when, _) in _live.items() if now - when >= LIVE_FINDINGS_MAX_AGE_S
        ]:
            del _live[stale]
    return found


def badges(found: list[Detection] | None) -> str:
    """``"⛔ Training diverged · ⚠️ …"``: the Runs table's findings cell."""
    return " · ".join(f"{MARKS[d.severity]} {d.title}" for d in found or [])


#: Ended runs whose findings were stored under older rules, evaluated again (and
#: stored) per table render: each costs a read of the run's series (~0.06 s), so a
#: store of many old runs catches up over a few renders instead of stalling one.
RESTORED_PER_RENDER = 5


def table_findings(frame: pd.DataFrame, live: set[str]) -> list[list[Detection] | None]:
    """Findings per row of a ``runs()`` frame: stored ones, or for the ``live`` run ids
    the findings evaluated at their latest logged step (``live_findings``); ended runs
    stored under older rules are evaluated again, a few per call."""
    rows: list[list[Detection] | None] = []
    budget = RESTORED_PER_RENDER
    for run_id, info, step, status in zip(
        frame["run_id"], frame["run_info"], frame["progress_step"], frame["status"], strict=True
    ):
        if run_id in live:
            rows.append(live_findings(run_id, step))
            continue
        stored = run_findings.stored_findings(info)
        stale = stored is not None and not run_findings.stored_current(info)
        if stale and status in TERMINAL and budget > 0:
            budget -= 1
            stored = findings(run_id)
        rows.append(stored)
    return rows


def table_badges(frame: pd.DataFrame, live: set[str]) -> list[str]:
    """Badges per row of a ``runs()`` frame (``table_findings``)."""
    return [badges(found) for found in table_findings(frame, live)]


def untrusted_flags(found_per_row: list[list[Detection] | None]) -> list[bool]:
    """Per row: a critical finding fired, so the run's result cannot be trusted."""
    return [run_findings.untrusted(found) for found in found_per_row]


@store_read(SLOW_LIVE_TTL)
def untrusted_runs(store: RunStore, run_ids: tuple[str, ...]) -> frozenset[str]:
    """Which of ``run_ids`` cannot be trusted (a critical finding fired): left out of
    "best" highlights and rankings unless a user asks for them."""
    return frozenset(
        run_id
        for run_id in run_ids
        if run_findings.untrusted(run_findings.run_findings(store, run_id))
    )


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
