"""A study through SLURM (see conftest): ``spherescope study run --slurm`` coordinates
from where it was started (a login node) and every trial and reproduction is a SLURM
job of the private cluster."""

from __future__ import annotations

import json
from pathlib import Path

import optuna
import pytest
from slurm_cluster import SlurmCluster

from db.store import RunStore
from worker import cli
from worker.study import storage
from worker.study.runs import study_runs

pytestmark = pytest.mark.slow

STUDY = """\
name = "slurm"
folds = 1
trials = 2
reproductions = 1
[base.data]
name = "synthetic"
batch_size = 4
samples_per_class = 2
options = { num_classes = 16, dim = 8, samples_per_class = 12 }
[base.model]
name = "mlp"
embedding_dim = 8
[base.training]
steps = 10
[base.diagnostics]
eval_every = 5
eval_max_samples = 100
tracked_samples = 0
[base.evaluation]
verification = false
[arms.triplet]
set = { "objective.name" = "triplet" }
space = { "objective.options.margin" = { type = "float", low = 0.05, high = 0.4 } }
"""


def test_a_two_trial_study_runs_as_slurm_jobs(
    slurm: SlurmCluster, store: RunStore, tmp_path: Path, capsys
) -> None:
    path = tmp_path / "study.toml"
    path.write_text(STUDY)
    code = cli.main(["study", "run", str(path), "--slurm", "--time", "5", "--parallel", "2",
                     "--json"])  # fmt: skip
    lines = capsys.readouterr().out.strip().splitlines()
    study_id = json.loads(lines[0])["study_id"]
    status = json.loads(lines[-1])
    assert code == 0, lines
    assert status["state"] == "finished"
    runs = study_runs(store, study_id)
    assert len(runs) == 3  # two trials (one hold-out fold each) and one reproduction
    for run in runs:
        assert run.record.status == "finished"
        assert run.record.executor.get("job_id")  # each one a SLURM job
    arm = optuna.load_study(
        study_name=f"{study_id}/triplet", storage=storage.journal_storage(store.home, study_id)
    )
    assert [t.state for t in arm.trials] == [optuna.trial.TrialState.COMPLETE] * 2
