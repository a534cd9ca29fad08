"""Every path that ends a run stores the same catalogue row content: the key final
values from what the run logged and its findings summary (``db.catalogue.ending``),
equal to what a rebuild from the run folders reads, and never starts DuckDB in a
process that forks (the reaper's)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from db.catalogue import ending, manage, snapshot
from db.catalogue.final_values import final_values
from db.lost_runs import mark_lost_runs
from db.store import RunStore

REPO = Path(__file__).resolve().parents[2]
ENDED = ("status", "metrics", "main_metric", "main_value", "findings", "findings_summary")


def logged_run(store: RunStore, config: dict) -> str:
    """A running run that logged a training loss that went NaN and two evaluations."""
    run_id = store.create_run(config, "logged")
    store.start_run(run_id, host="node-1")
    with store.tracker(run_id, flush_interval=0) as tracker:
        for step in range(1, 40):
            tracker.track(1.0 / step, "loss/total", step)
        tracker.track(float("nan"), "loss/total", 40)
        tracker.track_eval({"recall@1": 0.5, "nmi": 0.25}, 20)
        tracker.track_eval({"recall@1": 0.75, "nmi": 0.5}, 40)
    return run_id


def catalogue_row(store: RunStore, run_id: str) -> dict[str, Any]:
    rows = snapshot.read_table(store.files).to_pylist()
    row = next(row for row in rows if row["run_id"] == run_id)
    return {key: row[key] for key in ENDED}


def end_by(how: str, store: RunStore, run_id: str) -> None:
    if how == "set_status":  # the Celery parent, shutdown, a SLURM state
        store.set_status(run_id, "failed", "the worker process died while training")
    elif how == "reaper":
        later = datetime.now(UTC) + timedelta(hours=1)
        assert mark_lost_runs(store, 60.0, later) == [run_id]
    else:
        store.end_run(run_id, "finished")


@pytest.mark.parametrize("how", ["set_status", "reaper", "end_run"])
def test_every_end_stores_the_final_values_and_findings_a_rebuild_reads(
    store: RunStore, config: dict, how: str
) -> None:
    run_id = logged_run(store, config)
    end_by(how, store, run_id)
    row = catalogue_row(store, run_id)
    expected = final_values(store.files, run_id)
    assert expected["eval:recall@1"] == 0.75 and expected["eval:nmi"] == 0.5
    assert json.loads(row["metrics"]) == expected
    assert row["main_metric"] == "recall@1" and row["main_value"] == 0.75
    assert row["findings"] >= 1 and row["findings_summary"]  # the loss went NaN
    assert manage.rebuild_index(store) == 1
    assert catalogue_row(store, run_id) == row


def test_an_end_by_another_process_is_stored_again_by_the_run_itself(
    store: RunStore, config: dict
) -> None:
    run_id = logged_run(store, config)
    store.set_status(run_id, "cancelled", "stopped: the stack was shut down")
    with store.tracker(run_id, flush_interval=0) as tracker:  # its last step, after
        tracker.track_eval({"recall@1": 0.875}, 50)
    store.end_run(run_id, "cancelled", "stopped: the stack was shut down")
    assert json.loads(catalogue_row(store, run_id)["metrics"])["eval:recall@1"] == 0.875


def test_a_refused_end_changes_nothing_and_reads_nothing(
    store: RunStore, config: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = logged_run(store, config)
    store.end_run(run_id, "finished")
    read = []
    monkeypatch.setattr(ending, "record_ending", lambda *args, **kw: read.append(args))
    with pytest.raises(ValueError, match="finished"):
        store.set_status(run_id, "lost", "no heartbeat")
    assert read == [] and store.get_run(run_id).status == "finished"


REAPER_PROCESS = """
import json, sys
from datetime import UTC, datetime, timedelta
from db.catalogue import ending
from db.lost_runs import mark_lost_runs
from db.store import RunStore

ending.read_in_subprocess()  # what reaper_thread does in a worker's main process
store = RunStore(sys.argv[1])
lost = mark_lost_runs(store, 60.0, datetime.now(UTC) + timedelta(hours=1))
heavy = [name for name in ("duckdb", "pandas") if name in sys.modules]
print(json.dumps({"lost": lost, "heavy": heavy}))
"""


def test_a_process_that_forks_stores_its_endings_from_a_subprocess(
    store: RunStore, config: dict
) -> None:
    run_id = logged_run(store, config)
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(REAPER_PROCESS), str(store.home)],
        capture_output=True, text=True, cwd=REPO, check=True, timeout=180,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"lost": [run_id], "heavy": []}
    # the status is not held back for the ending: a fresh interpreter stores it after
    deadline = time.monotonic() + 120
    while not json.loads(catalogue_row(store, run_id)["metrics"] or "{}"):
        assert time.monotonic() < deadline, "the ending was never stored"
        time.sleep(0.2)
    row = catalogue_row(store, run_id)
    assert row["status"] == "lost"
    assert json.loads(row["metrics"]) == final_values(store.files, run_id)
    assert row["findings"] >= 1
    manage.rebuild_index(store)
    assert catalogue_row(store, run_id) == row
