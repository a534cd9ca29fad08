"""``spherescope up`` and studies: a study whose coordinator died, or was running when
the stack stopped, is resumed by the next ``up`` and finishes with its planned trials,
none failed for the interruption and no run repeated. Real stacks (private Redis,
real workers) over one store, one after the other."""

from __future__ import annotations

import collections
import contextlib
import copy
import os
import signal
from pathlib import Path
from typing import Any

import optuna
import pytest
from stack_fixtures import Stack, use_broker
from worker_fixtures import wait_for

from db.store import RunStore
from worker.shutdown import STOP_REASON
from worker.study import control, storage
from worker.study.runs import study_runs
from worker.study.spec import parse_spec

TABLE: dict[str, Any] = {
    "name": "upresume",
    "folds": 2,
    "trials": 2,
    "reproductions": 1,
    "seed": 5,
    "pruning": {"warmup_trials": 10},  # trials are counted: no median pruning
    "base": {
        "data": {"name": "synthetic", "batch_size": 4, "samples_per_class": 2,
                 "options": {"num_classes": 16, "dim": 8, "samples_per_class": 12}},
        "model": {"name": "mlp", "embedding_dim": 8},
        # long enough to be stopped in the middle of a run
        "training": {"steps": 600, "device": "cpu"},
        "diagnostics": {"eval_every": 200, "eval_max_samples": 100, "tracked_samples": 0},
        "evaluation": {"verification": False},
    },
    "arms": {"only": {"set": {"objective.name": "triplet"},
                      "space": {"objective.options.margin": {"type": "float", "low": 0.05,
                                                             "high": 0.4}}}},
}  # fmt: skip


def _running_run(store: RunStore, study_id: str) -> str | None:
    for run in study_runs(store, study_id):
        if run.record.status == "running" and (run.record.progress_step or 0) >= 5:
            return run.record.run_id
    return None


@pytest.mark.parametrize("coordinator", ["killed", "alive"])
def test_up_resumes_an_unfinished_study_without_losing_or_repeating(
    tmp_path: Path, coordinator: str
) -> None:
    """killed: the coordinator SIGKILLed mid-run, then the stack stopped; alive: the
    stack stopped while the coordinator ran (``up`` stops it first). Either way the run
    in flight ends ``cancelled`` by the shutdown, and the next ``up`` resumes the study,
    retries that run once and finishes every trial."""
    first = Stack(tmp_path, "--no-app", "--concurrency", "2")
    second = None
    try:
        first.wait_ready()
        home, store = first.home, RunStore(first.home)
        with use_broker(first.redis_url):
            study_id = control.create_study(home, parse_spec(copy.deepcopy(TABLE)), parallel=1)
        pid = control.start_detached(home, study_id, first.redis_url)
        wait_for(lambda: _running_run(store, study_id), 300, "a study run training", 0.2)
        in_flight = _running_run(store, study_id)
        # its launches are checked by the study's spec: the coordinator never loads torch
        assert "libtorch" not in Path(f"/proc/{pid}/maps").read_text()
        if coordinator == "killed":
            os.kill(pid, signal.SIGKILL)
            wait_for(lambda: not control.coordinator_running(home, study_id), 30, "its death")
        first.signal(signal.SIGINT)
        assert first.process.wait(120) == 0
        with contextlib.suppress(ChildProcessError):  # reaped by subprocess already
            os.waitpid(pid, 0)  # the coordinator ended (killed, or stopped by up)
        assert not control.coordinator_running(home, study_id)
        stopped = f"study {study_id}: coordinator stopped" in first.text()
        assert stopped == (coordinator == "alive")
        record = store.get_run(in_flight)
        assert record.status == "cancelled" and record.status_message.startswith(STOP_REASON)
        before = {run.record.run_id for run in study_runs(store, study_id)}

        second = Stack(tmp_path, "--no-app", "--concurrency", "2").wait_ready()
        assert f"study {study_id} resumed" in second.text()
        wait_for(lambda: storage.is_finished(home, study_id), 900, "the study to finish", 0.5)
        assert control.study_state(home, study_id) == "finished"

        runs = study_runs(store, study_id)
        assert before <= {run.record.run_id for run in runs}  # nothing lost
        first_tries = collections.Counter(run.key for run in runs if not run.retry)
        assert set(first_tries.values()) == {1}, first_tries  # no run launched twice
        retries = [run for run in runs if run.retry]
        assert [r.key for r in retries] == [
            next(r.key for r in runs if r.record.run_id == in_flight)
        ]  # the interrupted run, once
        arm = optuna.load_study(
            study_name=f"{study_id}/only", storage=storage.journal_storage(home, study_id)
        )
        assert len(arm.trials) == 2
        states = {t.state for t in arm.trials}
        assert states == {optuna.trial.TrialState.COMPLETE}, [t.user_attrs for t in arm.trials]
        assert len([r for r in runs if r.repro is not None and not r.retry]) == 2  # 1 × 2 folds
        assert all(r.record.status == "finished" for r in runs if r.record.run_id != in_flight)
    finally:
        first.close()
        if second is not None:
            second.close()
