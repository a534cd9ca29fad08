"""SLURM runs on the pages: the Launch page's "Run on" choice (remembered), the Run
page's job, pending reason and requeues, the Runs table's "runs on" column."""

from __future__ import annotations

import time

import streamlit as st
from app_fixtures import open_page, texts

import worker.slurm.submit
from app.data.tables import runs_table
from db.queries import list_runs
from db.scheduler_record import write_executor, write_scheduler_state

SLURM_RECORD = {
    "executor": "slurm",
    "job_id": "4242",
    "partition": "gpu",
    "limits": {"time_min": 120, "gpus": 1, "nodes": 1, "account": "lab"},
    "submitted_at": 0.0,
}


def test_launch_on_slurm_submits_with_the_fields_and_remembers_them(home, store, monkeypatch):
    calls = []

    def fake_submit(config, request, name=None, tags=(), *, store=None, project=None):
        calls.append(request)
        run_id = store.create_run(dict(config), name, tags=tags)
        write_executor(store.files, run_id, SLURM_RECORD)
        return run_id

    monkeypatch.setattr(worker.slurm.submit, "submit_slurm", fake_submit)
    app = open_page("views/launch.py")
    app.radio(key="launch.run_on").set_value("SLURM").run()
    app.text_input(key="launch.slurm.partition").set_value("gpu")
    app.number_input(key="launch.slurm.time_min").set_value(120)
    app.number_input(key="launch.slurm.nodes").set_value(2)
    app.button(key="launch.go").click().run()
    assert not app.exception and not app.error, texts(app.error)
    (request,) = calls
    assert (request.partition, request.time_min, request.gpus, request.nodes) == ("gpu", 120, 0, 2)
    assert any("Launched 1 run" in s for s in texts(app.success))

    app.radio(key="launch.run_on").set_value("workers").run()
    app.radio(key="launch.run_on").set_value("SLURM").run()
    assert app.text_input(key="launch.slurm.partition").value == "gpu"
    assert app.number_input(key="launch.slurm.time_min").value == 120
    assert app.number_input(key="launch.slurm.nodes").value == 2


def test_run_page_shows_the_job_its_pending_reason_and_requeues(home, store, monkeypatch):
    # what the store says is drawn; asking a SLURM (tests/worker/slurm) would close this
    # run, whose job 4242 no SLURM knows
    monkeypatch.setattr("worker.slurm.states.refresh_slurm_runs", lambda store: set())
    run_id = store.create_run({"training": {"steps": 10}}, "on slurm")
    write_executor(store.files, run_id, SLURM_RECORD)
    write_scheduler_state(store.files, run_id, "PENDING", "Resources")
    app = open_page("views/run.py", {"run_id": run_id})
    assert not app.exception
    assert any("job 4242 · partition gpu · 120 min · 1 GPU" in c for c in texts(app.caption))
    assert "SLURM job 4242 pending: Resources" in texts(app.info)

    store.set_status(run_id, "running", requeues=[{"at": time.time(), "step": 40}])
    write_scheduler_state(store.files, run_id, "RUNNING")
    st.cache_data.clear()  # a reload within the run read's 1 s TTL would show the cached run
    app = open_page("views/run.py", {"run_id": run_id})
    assert any("Requeued by SLURM once" in t and "step 40" in t for t in texts(app.info))


def test_runs_table_says_where_a_run_runs_and_why_it_waits(home, store):
    on_slurm = store.create_run({}, "slurm run")
    write_executor(store.files, on_slurm, SLURM_RECORD)
    write_scheduler_state(store.files, on_slurm, "PENDING", "Priority")
    store.create_run({}, "worker run")
    table = runs_table(list_runs(store)).set_index("name")
    assert table.loc["slurm run", "runs on"] == "SLURM 4242 (gpu)"
    assert table.loc["slurm run", "message"] == "SLURM job 4242 pending: Priority"
    assert table.loc["worker run", "runs on"] == ""


def test_the_limits_of_a_job_of_several_nodes_count_gpus_per_node() -> None:
    from app.data.executor import limits_text

    record = {"executor": {"limits": {"time_min": 600, "gpus": 4, "nodes": 2}}}
    assert limits_text(record) == "600 min · 4 GPUs per node · 2 nodes"
    record = {"executor": {"limits": {"time_min": 30, "gpus": 1, "nodes": 1}}}
    assert limits_text(record) == "30 min · 1 GPU · 1 node"
