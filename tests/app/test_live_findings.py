"""The Runs table's findings of running runs: evaluated again only when a run has
logged more (each evaluation reads the run's series; with 50 running runs the table
re-read them all whenever its caches expired: 3.6 s a render in bench/runs_page.py)."""

from __future__ import annotations

import streamlit as st

from app import data
from db import findings as run_findings
from db.store import RunStore


def _log(store: RunStore, run_id: str, steps: range) -> None:
    with store.tracker(run_id, flush_interval=0) as tracker:
        for step in steps:
            tracker.track_many({"loss/total": 0.1, "norm/mean": 1.0}, step)
            tracker.track_progress(step, 100)


def test_a_running_runs_findings_are_evaluated_again_only_once_it_logs_more(
    store: RunStore, monkeypatch
) -> None:
    run_id = store.create_run({}, "live", kind="train")
    store.set_status(run_id, "running", device="cpu")
    _log(store, run_id, range(1, 6))
    evaluated: list[str] = []
    real = run_findings.run_findings

    def counted(store_: RunStore, run: str):
        evaluated.append(run)
        return real(store_, run)

    monkeypatch.setattr(run_findings, "run_findings", counted)

    def render() -> None:
        st.cache_data.clear()  # every cache expired, as after their TTLs
        table = data.runs_table(data.runs())
        assert table.set_index("run_id").loc[run_id, "findings"] == ""

    render()
    render()
    assert evaluated == [run_id]  # nothing new logged: the findings were kept
    _log(store, run_id, range(6, 8))
    render()
    assert evaluated == [run_id, run_id]
