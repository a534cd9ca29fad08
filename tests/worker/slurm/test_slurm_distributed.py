"""Runs of several ranks on the real SLURM cluster (see conftest): a 2-task job is one
run whose rank 0 writes, its statistics those of one process over the same global batch;
a preempted one (submitit's signal, USR2) hands itself over through submitit's
checkpointing protocol, resumes as the same run, then is cancelled with both ranks."""

from __future__ import annotations

import numpy as np
import pytest
from slurm_cluster import SlurmCluster
from test_slurm_runs import at_step, checkpoint_steps
from worker_fixtures import config, wait_for, wait_status

from db import queries
from db.store import RunStore
from sphere_engine.config import RunConfig
from sphere_engine.tracking import InMemoryTracker
from worker import cli
from worker.slurm import SlurmRequest
from worker.slurm.submit import submit_slurm

pytestmark = pytest.mark.slow
ENDED = {"finished", "failed", "cancelled", "lost"}
LONG = 1_000_000  # steps: a run that only ends when it is stopped
# as tests/worker/test_multi_device.py: P = 2 classes of K = 4 (one class per rank) and a
# softmax head, so two ranks averaging their gradients take exactly the one-process steps
ON_CPU = {
    "data": {"batch_size": 8, "samples_per_class": 4},
    "objective": {"kind": "head", "name": "normface"},
    "training": {"devices": 2, "device": "cpu"},
    "diagnostics": {"tracked_samples": 8},
}


def submitted_callable(store: RunStore, run_id: str):
    """What the job's next start runs: its submitted pickle (submitit's protocol)."""
    import submitit

    (pickle,) = (store.run_dir(run_id) / "slurm").glob("*_submitted.pkl")
    return submitit.helpers.DelayedSubmission.load(pickle).function


def test_two_rank_jobs_one_run_each_finished_and_preempted_resumed_then_cancelled(
    slurm: SlurmCluster, store: RunStore
) -> None:
    steps = 5
    finishes = submit_slurm(config(steps, **ON_CPU), SlurmRequest(time_min=5), store=store)
    long = config(LONG, **ON_CPU)
    long["training"]["checkpoint_every"] = 10
    preempted = submit_slurm(long, SlurmRequest(time_min=10), store=store)
    for run_id in (finishes, preempted):  # one job of two tasks (ranks) per run
        job = store.get_run(run_id).executor["job_id"]
        tasks = slurm.command("squeue", "-h", "-j", job, "-o", "%D|%C").strip()
        assert tasks == "1|2", tasks

    # ---- the finished run: rank 0's statistics over the global batch
    record = wait_status(store, finishes, ENDED, 240)
    assert (record.status, record.status_message) == ("finished", "")
    assert record.device == "cpu ×2" and record.progress_step == steps
    one = config(steps, **ON_CPU)
    one["training"]["devices"] = 1
    reference = InMemoryTracker()
    from sphere_engine.train import run_training

    run_training(RunConfig.from_dict(one), reference)
    expected = {(s, n): v for s, n, v, _ in reference.scalars if not n.startswith("time/")}
    names = sorted({name for _, name in expected})
    assert {"norm/var", "cos/gap", "grad/norm_mean"} <= set(names)
    frame = queries.metric_series(store, [finishes], names, max_points=1000)
    columns = frame["step"], frame["name"], frame["value"]
    logged = {(int(s), n): v for s, n, v in zip(*columns, strict=True)}
    assert set(logged) == set(expected)
    keys = sorted(expected)
    np.testing.assert_allclose(
        [logged[k] for k in keys], [expected[k] for k in keys], rtol=1e-4, atol=1e-6
    )
    assert list(queries.checkpoints(store, finishes)["step"]) == [steps]  # rank 0's only

    # ---- the preempted run: USR2 well before the limit → checkpoint(), requeue, resume
    job = store.get_run(preempted).executor["job_id"]
    at_step(store, preempted, 12, timeout_s=180)
    slurm.command("scancel", "--signal=USR2", job)  # to every task, as a preemption sends it

    def requeued() -> bool:
        return slurm.command("squeue", "-h", "-j", job, "-o", "%T").strip() == "PENDING"

    wait_for(requeued, 60, f"job {job} requeued by itself", interval=0.5)
    stopped_at = checkpoint_steps(store, preempted)[-1]
    following = submitted_callable(store, preempted)  # what checkpoint() handed over
    assert (following.run_id, following.resume_from) == (
        preempted,
        str(store.run_dir(preempted) / "checkpoints" / f"step_{stopped_at:08d}.pt"),
    )
    assert store.get_run(preempted).status == "running"
    slurm.command("scontrol", "update", f"JobId={job}", "StartTime=now")
    at_step(store, preempted, stopped_at + 3, timeout_s=180)
    record = store.get_run(preempted)
    assert [r["step"] for r in record.extra["requeues"]] == [stopped_at]
    assert record.status_message == "" or "resumed" in record.status_message

    assert cli.main(["cancel", preempted]) == 0  # SIGTERM to both ranks; rank 0 writes
    record = wait_status(store, preempted, ENDED, 90)
    assert record.status == "cancelled", record.status_message
    last = checkpoint_steps(store, preempted)[-1]
    assert record.status_message == f"cancelled at step {last}" and last > stopped_at
    assert record.device == "cpu ×2"

    def job_ended() -> bool:
        state = slurm.command("squeue", "-h", "-t", "all", "-j", job, "-o", "%T").strip()
        return state in {"COMPLETED", "CANCELLED", "FAILED"}

    wait_for(job_ended, 60, f"job {job} ended with both its tasks", interval=0.5)
