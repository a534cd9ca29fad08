"""The framework callbacks in data-parallel jobs of two real CPU processes: Lightning
``ddp`` and the Hugging Face Trainer under torchrun and ``accelerate launch`` make one
run per job with the global batch's statistics, and evaluate the gathered validation
set once."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from db import queries
from db.store import RunStore
from sphere_engine.evaluation.external import evaluate_external
from tests.sphere_engine.distributed.processes import ROOT, accelerate_launch, free_port, torchrun

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent


def _one_run(home: Path) -> tuple[RunStore, object]:
    store = RunStore(home)
    [record] = store.list_runs()
    assert record.status == "finished", record.status_message
    return store, record


def _global_norms_and_evaluation(store: RunStore, run_id: str, inputs, labels) -> None:
    series = queries.metric_series(store, run_id, ["norm/mean", "norm/var"])
    for name, expected in (("norm/mean", 2.0), ("norm/var", 1.0)):
        values = series[series["name"] == name]["value"].tolist()
        assert values and all(math.isclose(v, expected, rel_tol=1e-5) for v in values), name
    evals = queries.eval_series(store, run_id)
    logged = dict(zip(evals["name"], evals["value"], strict=True))
    union, _, _ = evaluate_external(inputs, labels)  # the whole validation set, once
    assert logged.keys() == union.keys()
    for name, value in union.items():
        assert math.isclose(logged[name], value, rel_tol=1e-5, abs_tol=1e-6) or (
            math.isnan(value) and math.isnan(logged[name])
        ), name


def test_lightning_ddp_with_two_processes_is_one_run_of_the_global_batch(tmp_path: Path) -> None:
    from tests.spherescope.lightning_ddp_job import data

    home = tmp_path / "store"
    done = subprocess.run(
        [sys.executable, str(HERE / "lightning_ddp_job.py"), "ddp"],
        cwd=ROOT,
        env={
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "SPHERESCOPE_HOME": str(home),
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": str(free_port()),
            "OMP_NUM_THREADS": "1",
        },
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    store, record = _one_run(home)
    job = record.config["spherescope_distributed"]
    assert (job["world_size"], job["launcher"], job["scope"]) == (2, "lightning ddp", "global")
    validation = data(7, 1)
    _global_norms_and_evaluation(store, record.run_id, *validation.tensors)


def test_hf_trainer_under_torchrun_is_one_run_of_the_global_batch(tmp_path: Path) -> None:
    from tests.spherescope.hf_job import data

    home = tmp_path / "store"
    done = torchrun(
        HERE / "hf_job.py",
        str(tmp_path / "out"),
        env={"SPHERESCOPE_HOME": str(home)},
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    store, record = _one_run(home)
    job = record.config["spherescope_distributed"]
    assert (job["world_size"], job["launcher"]) == (2, "hf trainer (torchrun)")
    _global_norms_and_evaluation(store, record.run_id, *data(7, 1))


def test_hf_trainer_under_accelerate_launch_is_one_run_of_the_global_batch(
    tmp_path: Path,
) -> None:
    from tests.spherescope.hf_job import data

    home = tmp_path / "store"
    done = accelerate_launch(
        HERE / "hf_job.py", str(tmp_path / "out"), env={"SPHERESCOPE_HOME": str(home)}
    )
    assert done.returncode == 0, done.stderr[-4000:]
    store, record = _one_run(home)
    job = record.config["spherescope_distributed"]
    assert (job["world_size"], job["launcher"], job["backend"]) == (
        2,
        "hf trainer (accelerate launch)",
        "gloo",
    )
    _global_norms_and_evaluation(store, record.run_id, *data(7, 1))
