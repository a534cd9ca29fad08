"""The Runs table's findings of running runs: evaluated again only when a run has
logged more (each evaluation reads the run's series; with 50 running runs the table
re-read them all whenever its caches expired: 3.6 s a render in bench/runs_page.py)."""

from __future__ import annotations

import importlib

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


def test_the_memo_forgets_runs_not_asked_for_within_the_max_age(
    store: RunStore, monkeypatch
) -> None:
    # the module (app.data re-exports its ``findings`` function under the same name)
    dashboard_findings = importlib.import_module("app.data.findings")
    clock = [1000.0]
    monkeypatch.setattr(dashboard_findings.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(dashboard_findings, "_live", {})
    ended, running = (store.create_run({}, name, kind="train") for name in ("ended", "running"))
    for run_id in (ended, running):
        _log(store, run_id, range(1, 3))
    dashboard_findings.live_findings(ended, 2)
    clock[0] += dashboard_findings.LIVE_FINDINGS_MAX_AGE_S / 2
    dashboard_findings.live_findings(running, 2)
    assert {run for _, run in dashboard_findings._live} == {ended, running}
    clock[0] += dashboard_findings.LIVE_FINDINGS_MAX_AGE_S / 2  # `ended` is stale now
    _log(store, running, range(3, 4))
    dashboard_findings.live_findings(running, 3)  # logged more: evaluated again
    assert {run for _, run in dashboard_findings._live} == {running}


def test_the_table_evaluates_a_few_runs_stored_under_older_rules_per_render(
    store: RunStore,
) -> None:
    # runs ended before the rules changed: a render re-evaluates (and stores) a few of
    # them, so a store of many old runs catches up without stalling one render
    dashboard_findings = importlib.import_module("app.data.findings")
    run_ids = []
    for index in range(dashboard_findings.RESTORED_PER_RENDER + 2):
        run_id = store.create_run({}, f"old {index}", kind="train")
        store.set_status(run_id, "running", device="cpu")
        _log(store, run_id, range(1, 4))
        store.set_status(run_id, "finished", device="cpu")
        # its end stored findings under today's rules: make them a run of older rules
        store.update_run_info(run_id, {run_findings.INFO_KEY: [], run_findings.VERSION_KEY: None})
        run_ids.append(run_id)
    st.cache_data.clear()
    data.runs_table(data.runs())
    current = [run_findings.stored_current(store.get_run(r).run_info) for r in run_ids]
    assert sum(current) == dashboard_findings.RESTORED_PER_RENDER
    st.cache_data.clear()
    data.runs_table(data.runs())
    assert all(run_findings.stored_current(store.get_run(r).run_info) for r in run_ids)
