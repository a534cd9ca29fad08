"""Studies through real parts: a private Redis, real Celery workers, the run store and
the study's Optuna journal; the coordinator as the CLI runs it (in this process or as a
process of its own that is SIGKILLed and resumed)."""

from __future__ import annotations

import collections
import copy
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import optuna
import pytest
from worker_fixtures import REPO, WorkerProcess, wait_for

from db.store import RunStore
from worker.study import control, storage
from worker.study.results import study_results
from worker.study.runs import study_runs
from worker.study.spec import parse_spec

# 8 training classes: 2 folds of 4 classes each; P×K = 2 classes × 2 per batch.
BASE: dict[str, Any] = {
    "data": {
        "name": "synthetic", "batch_size": 4, "samples_per_class": 2,
        "options": {"num_classes": 16, "dim": 8, "samples_per_class": 12},
    },
    "model": {"name": "mlp", "embedding_dim": 8},
    "training": {"steps": 12, "device": "cpu"},
    "diagnostics": {"eval_every": 6, "eval_max_samples": 100, "tracked_samples": 0},
    "evaluation": {"verification": False},
}  # fmt: skip


def study_table(name: str, trials: int = 2, reproductions: int = 2, **arms: Any) -> dict[str, Any]:
    return {
        "name": name,
        "folds": 2,
        "trials": trials,
        "reproductions": reproductions,
        "seed": 3,
        "pruning": {"warmup_trials": 10},  # these tests count trials: no median pruning
        "base": copy.deepcopy(BASE),
        "arms": arms
        or {
            "triplet": {
                "set": {"objective.name": "triplet"},
                "space": {"objective.options.margin": {"type": "float", "low": 0.05, "high": 0.4}},
            },
            "triplet-sec": {
                "set": {"objective.name": "triplet", "regularizer.name": "sec"},
                "space": {"regularizer.weight": {"type": "log_float", "low": 0.01, "high": 1.0}},
            },
        },
    }


def _ranges(ranges: list[list[int]]) -> set[int]:
    return {c for first, last in ranges for c in range(first, last + 1)}


def _no_duplicates(runs) -> None:
    slots = collections.Counter(run.key for run in runs if not run.retry)
    assert all(count == 1 for count in slots.values()), slots


@pytest.fixture(scope="module")
def finished_study(cpu_worker: WorkerProcess, home: Path) -> str:
    """One small study run to its end by the coordinator in this process."""
    cpu_worker.ensure_running()
    study_id = control.create_study(home, parse_spec(study_table("small")), parallel=2)
    progress = control.coordinate(home, study_id, poll_s=0.1, max_seconds=600)
    assert progress.state == "finished"
    return study_id


def test_a_study_gives_every_arm_its_budget_and_reproduces_the_best(
    finished_study: str, home: Path
) -> None:
    status = control.study_status(home, finished_study)
    assert status["state"] == "finished"
    for arm in ("triplet", "triplet-sec"):
        info = status["arms"][arm]
        assert info["asked"] == info["budget"] == 2
        assert sum(info["trials"].values()) == 2 and "running" not in info["trials"]
    runs = study_runs(RunStore(home), finished_study)
    _no_duplicates(runs)
    repros = [r for r in runs if r.repro is not None]
    assert len(repros) == 2 * 2 * 2  # arms × reproductions × folds
    results = study_results(home, finished_study)
    for arm in ("triplet", "triplet-sec"):
        rows = {(r.evaluation, r.metric): r for r in results.rows if r.arm == arm}
        assert rows[("separated", "map@r")].n == 2
        assert rows[("concatenated", "map@r")].n == 2
        assert rows[("separated", "map@r")].ci_low <= rows[("separated", "map@r")].mean
    # the journal opens with plain Optuna, as the README says
    journal = storage.journal_storage(home, finished_study)
    arm_study = optuna.load_study(study_name=f"{finished_study}/triplet", storage=journal)
    assert len(arm_study.trials) == 2
    for trial in arm_study.trials:
        if trial.state == optuna.trial.TrialState.COMPLETE:
            assert set(trial.user_attrs["fold_values"]) == {"0", "1"}
            assert trial.value == pytest.approx(sum(trial.user_attrs["fold_values"].values()) / 2)


def test_no_trial_run_evaluated_a_test_class(finished_study: str, home: Path) -> None:
    runs = study_runs(RunStore(home), finished_study)
    trials = [r for r in runs if r.trial is not None]
    assert trials
    for run in trials:
        info = run.record.run_info
        classes = info["data_classes"]
        assert info["evaluated_on"] == "validation"
        assert "final_test_step" not in info
        assert not _ranges(classes["validation"]) & _ranges(classes["test"])
        assert not _ranges(classes["train"]) & _ranges(classes["test"])
        assert run.record.config["data"]["fold"] == run.fold
    for run in runs:
        if run.repro is not None:  # a reproduction sees the test classes once, at its end
            assert "final_test_step" in run.record.run_info


def test_the_cli_reports_the_table_and_status(finished_study: str, capsys) -> None:
    from worker.cli import main

    assert main(["study", "report", finished_study, "--format", "md"]) == 0
    text = capsys.readouterr().out
    assert "| triplet |" in text and "MAP@R" in text and "separated" in text
    assert main(["study", "status", finished_study, "--json"]) == 0
    assert '"state": "finished"' in capsys.readouterr().out


def test_a_coordinator_killed_mid_study_resumes_without_losing_or_repeating(
    worker: WorkerProcess, home: Path, tmp_path: Path
) -> None:
    """The coordinator SIGKILLed mid-study, then resumed as `spherescope up` resumes it."""
    table = study_table(
        "killed", trials=3, reproductions=1,
        only={"set": {"objective.name": "triplet"},
              "space": {"optimizer.lr": {"type": "log_float", "low": 1e-3, "high": 1e-2}}},
    )  # fmt: skip
    study_id = control.create_study(home, parse_spec(table), parallel=2)
    env = dict(os.environ, PYTHONPATH=str(REPO), SPHERESCOPE_HOME=str(home))
    log = (tmp_path / "coordinator.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "worker.cli", "study", "resume", study_id],
        cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    store = RunStore(home)
    wait_for(lambda: len(study_runs(store, study_id)) >= 3, 180, "three runs of the study")
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert not control.coordinator_running(home, study_id)
    before = {run.record.run_id for run in study_runs(store, study_id)}
    # what `spherescope up` does: a coordinator for every unfinished study
    assert study_id in control.resume_unfinished_studies(home)
    wait_for(lambda: control.coordinator_running(home, study_id), 60, "the resumed coordinator")
    assert study_id not in control.resume_unfinished_studies(home)  # one coordinator a study
    wait_for(lambda: storage.is_finished(home, study_id), 600, "the study to finish", 0.5)
    runs = study_runs(store, study_id)
    _no_duplicates(runs)
    assert before <= {run.record.run_id for run in runs}  # nothing lost
    arm = optuna.load_study(
        study_name=f"{study_id}/only", storage=storage.journal_storage(home, study_id)
    )
    assert len(arm.trials) == 3
    assert all(t.state.is_finished() for t in arm.trials)
    trial_runs = [r for r in runs if r.trial is not None]
    assert {r.trial for r in trial_runs} == {0, 1, 2}


def test_a_diverging_setting_is_pruned_with_its_finding(worker: WorkerProcess, home: Path) -> None:
    table = study_table(
        "diverging", trials=1, reproductions=1,
        wild={"set": {"objective.name": "triplet", "optimizer.name": "sgd", "optimizer.lr": 1e12,
                      "training.steps": 40},
              "space": {"optimizer.momentum": {"type": "float", "low": 0.0, "high": 0.5}}},
    )  # fmt: skip
    study_id = control.create_study(home, parse_spec(table), parallel=1)
    progress = control.coordinate(home, study_id, poll_s=0.1, max_seconds=300)
    assert progress.state == "finished"
    arm = optuna.load_study(
        study_name=f"{study_id}/wild", storage=storage.journal_storage(home, study_id)
    )
    (trial,) = arm.trials
    assert trial.state == optuna.trial.TrialState.PRUNED
    assert trial.user_attrs["pruned_reason"].startswith("Training diverged")
    runs = study_runs(RunStore(home), study_id)
    assert [r.fold for r in runs if r.trial is not None] == [0]  # fold 1 never started
    assert not [r for r in runs if r.repro is not None]  # nothing completed to reproduce
