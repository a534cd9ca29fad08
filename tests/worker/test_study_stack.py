"""``spherescope up`` and studies: a study whose coordinator died, or was running when
the stack stopped, is resumed by the next ``up`` and finishes with its planned trials,
none failed for the interruption and no run repeated. Real stacks (private Redis,
real workers) over one store, one after the other; both cases share them (two studies
in flight at once, one coordinator SIGKILLed), so the pair of stacks starts once."""

from __future__ import annotations

import collections
import contextlib
import copy
import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import optuna
import pytest
from stack_fixtures import Stack, use_broker
from worker_fixtures import wait_for

from db.records import RunRecord
from db.store import RunStore
from worker.shutdown import STOP_REASON
from worker.study import control, storage
from worker.study.runs import StudyRun, study_runs
from worker.study.spec import parse_spec

#: killed: the coordinator SIGKILLed mid-run, then the stack stopped; alive: the stack
#: stopped while the coordinator ran (``up`` stops it first)
COORDINATORS = ("killed", "alive")

TABLE: dict[str, Any] = {
    "name": "upresume",
    "folds": 1,  # folds across a coordinator's restart: test_study_workers
    "trials": 2,
    "reproductions": 1,
    "seed": 5,
    "pruning": {"warmup_trials": 10},  # trials are counted: no median pruning
    "base": {
        "data": {"name": "synthetic", "batch_size": 4, "samples_per_class": 2,
                 "options": {"num_classes": 16, "dim": 8, "samples_per_class": 12}},
        "model": {"name": "mlp", "embedding_dim": 8},
        # long enough to be stopped in the middle of a run: the stop comes after both
        # studies have a run in flight, one coordinator is killed and ``up`` has stopped
        # the other (600 steps ended first, once, in a full-suite run)
        "training": {"steps": 1500, "device": "cpu"},
        "diagnostics": {"eval_every": 500, "eval_max_samples": 100, "tracked_samples": 0},
        "evaluation": {"verification": False},
    },
    "arms": {"only": {"set": {"objective.name": "triplet"},
                      "space": {"objective.options.margin": {"type": "float", "low": 0.05,
                                                             "high": 0.4}}}},
}  # fmt: skip


@dataclass(frozen=True)
class Resumed:
    """What one study went through: stopped with a run in flight, resumed, finished."""

    study_id: str
    in_flight: str
    coordinator_loaded_torch: bool
    stop_logged: bool  # the first stack said it stopped this study's coordinator
    stopped_record: RunRecord  # the run in flight, once the first stack stopped
    before: set[str]  # the study's runs when the first stack stopped
    resume_logged: bool  # the second stack said it resumed this study
    state: str
    runs: list[StudyRun]
    trial_states: set[optuna.trial.TrialState]
    trial_attrs: list[dict[str, Any]]
    trials: int


def _running_run(store: RunStore, study_id: str) -> str | None:
    for run in study_runs(store, study_id):
        if run.record.status == "running" and (run.record.progress_step or 0) >= 5:
            return run.record.run_id
    return None


def _all_in_flight(store: RunStore, studies: dict[str, str]) -> dict[str, str] | None:
    """Each study's run in flight, when every one has one at the same time."""
    running = {how: _running_run(store, study_id) for how, study_id in studies.items()}
    return running if all(running.values()) else None


@pytest.fixture(scope="module")
def resumed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Resumed]:
    """One study per ``COORDINATORS`` case, both in flight on one stack (two pool
    processes, one run each): the killed case's coordinator SIGKILLed, then the stack
    stopped (SIGINT) and a second one started over the same store, which resumes both."""
    tmp = tmp_path_factory.mktemp("up-resume")
    first = Stack(tmp, "--no-app", "--concurrency", "2")
    second = None
    try:
        first.wait_ready()
        home, store = first.home, RunStore(first.home)
        studies, pids = {}, {}
        with use_broker(first.redis_url):
            for how in COORDINATORS:
                table = copy.deepcopy(TABLE) | {"name": f"upresume-{how}"}
                studies[how] = control.create_study(home, parse_spec(table), parallel=1)
        for how, study_id in studies.items():
            pids[how] = control.start_detached(home, study_id, first.redis_url)
        in_flight = wait_for(
            lambda: _all_in_flight(store, studies), 300, "a run of each study training", 0.2
        )
        # its launches are checked by the study's spec: the coordinator never loads torch
        torch = {
            how: "libtorch" in Path(f"/proc/{pid}/maps").read_text() for how, pid in pids.items()
        }
        os.kill(pids["killed"], signal.SIGKILL)
        killed = studies["killed"]
        wait_for(lambda: not control.coordinator_running(home, killed), 30, "its death")
        first.signal(signal.SIGINT)
        assert first.process.wait(120) == 0
        for pid in pids.values():
            with contextlib.suppress(ChildProcessError):  # reaped by subprocess already
                os.waitpid(pid, 0)  # the coordinator ended (killed, or stopped by up)
        for study_id in studies.values():
            assert not control.coordinator_running(home, study_id)
        first_log = first.text()
        before = {
            how: {r.record.run_id for r in study_runs(store, s)} for how, s in studies.items()
        }
        stopped = {how: store.get_run(in_flight[how]) for how in COORDINATORS}

        second = Stack(tmp, "--no-app", "--concurrency", "2").wait_ready()
        for study_id in studies.values():
            wait_for(
                lambda s=study_id: storage.is_finished(home, s), 900, "the study to finish", 0.2
            )
        second_log = second.text()
        outcomes = {}
        for how, study_id in studies.items():
            arm = optuna.load_study(
                study_name=f"{study_id}/only", storage=storage.journal_storage(home, study_id)
            )
            outcomes[how] = Resumed(
                study_id=study_id,
                in_flight=in_flight[how],
                coordinator_loaded_torch=torch[how],
                stop_logged=f"study {study_id}: coordinator stopped" in first_log,
                stopped_record=stopped[how],
                before=before[how],
                resume_logged=f"study {study_id} resumed" in second_log,
                state=control.study_state(home, study_id),
                runs=study_runs(store, study_id),
                trial_states={t.state for t in arm.trials},
                trial_attrs=[t.user_attrs for t in arm.trials],
                trials=len(arm.trials),
            )
    finally:
        first.close()
        if second is not None:
            second.close()
    return outcomes


@pytest.mark.parametrize("coordinator", COORDINATORS)
def test_up_resumes_an_unfinished_study_without_losing_or_repeating(
    resumed: dict[str, Resumed], coordinator: str
) -> None:
    """killed: the coordinator SIGKILLed mid-run, then the stack stopped; alive: the
    stack stopped while the coordinator ran (``up`` stops it first). Either way the run
    in flight ends ``cancelled`` by the shutdown, and the next ``up`` resumes the study,
    retries that run once and finishes every trial."""
    study = resumed[coordinator]
    assert not study.coordinator_loaded_torch
    assert study.stop_logged == (coordinator == "alive")
    record = study.stopped_record
    assert record.status == "cancelled" and record.status_message.startswith(STOP_REASON)
    assert study.resume_logged
    assert study.state == "finished"

    runs = study.runs
    assert study.before <= {run.record.run_id for run in runs}  # nothing lost
    first_tries = collections.Counter(run.key for run in runs if not run.retry)
    assert set(first_tries.values()) == {1}, first_tries  # no run launched twice
    retries = [run for run in runs if run.retry]
    assert [r.key for r in retries] == [
        next(r.key for r in runs if r.record.run_id == study.in_flight)
    ]  # the interrupted run, once
    assert study.trials == 2
    assert study.trial_states == {optuna.trial.TrialState.COMPLETE}, study.trial_attrs
    assert len([r for r in runs if r.repro is not None and not r.retry]) == 1  # on all classes
    assert all(r.record.status == "finished" for r in runs if r.record.run_id != study.in_flight)
