"""Cancelling a study: its queued runs are cancelled, the coordinator fails its open
trials with the reason and stops; ``study status`` says so (real Redis, no worker: the
runs stay queued)."""

from __future__ import annotations

import json
from pathlib import Path

import optuna

from db.store import RunStore
from worker.cli import main
from worker.study import control, storage
from worker.study.runs import study_runs
from worker.study.spec import parse_spec

STUDY = {
    "name": "cancelled",
    "folds": 2,
    "trials": 3,
    "reproductions": 1,
    "base": {
        "data": {"name": "synthetic", "batch_size": 4, "samples_per_class": 2,
                 "options": {"num_classes": 16, "dim": 8}},
        "model": {"name": "mlp", "embedding_dim": 8},
        "training": {"steps": 10},
    },
    "arms": {"triplet": {"set": {"objective.name": "triplet"},
                         "space": {"optimizer.lr": {"type": "log_float", "low": 1e-4,
                                                    "high": 1e-2}}}},
}  # fmt: skip


def test_cancel_stops_the_study_and_its_runs(idle_broker, home: Path, capsys) -> None:
    study_id = control.create_study(home, parse_spec(STUDY), parallel=2)
    progress = control.coordinate(home, study_id, poll_s=0.05, max_seconds=2)
    assert progress.state == "running" and len(progress.launched) == 2  # --parallel 2
    assert main(["study", "cancel", study_id, "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert sorted(answer["cancelled_runs"]) == sorted(progress.launched)
    store = RunStore(home)
    assert {run.record.status for run in study_runs(store, study_id)} == {"cancelled"}
    assert control.coordinate(home, study_id, poll_s=0.05).state == "cancelled"
    arm = optuna.load_study(
        study_name=f"{study_id}/triplet", storage=storage.journal_storage(home, study_id)
    )
    assert [t.state for t in arm.trials] == [optuna.trial.TrialState.FAIL] * 2
    assert {t.user_attrs["failed_reason"] for t in arm.trials} == {"study cancelled"}
    assert main(["study", "status", study_id]) == 0
    assert f"study {study_id} (cancelled)" in capsys.readouterr().out
