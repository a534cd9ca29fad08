"""A node that fails under a running SLURM run (the real cluster of conftest, its one
node set down with a reason, returned in the end): the run ends ``lost`` with SLURM's
reason, and ``sacct`` (the job-completion log: this cluster has no slurmdbd) reports the
attempt the node failure ended, which the reaper reads for a run whose job died with
its node without a word."""

from __future__ import annotations

from pathlib import Path

import pytest
from slurm_cluster import SlurmCluster
from test_slurm_runs import at_step, config_file, submit
from worker_fixtures import wait_status

from db.scheduler_record import write_executor
from db.store import RunStore
from worker.reaper import reap_lost
from worker.slurm.states import _parse, accounting_states

pytestmark = pytest.mark.slow


def test_a_node_failure_ends_the_run_lost_with_slurms_reason(
    slurm: SlurmCluster, store: RunStore, tmp_path: Path, capsys
) -> None:
    run_id = submit(capsys, config_file(tmp_path, steps=1_000_000), "--time", "5")
    job = store.get_run(run_id).executor["job_id"]
    # a run whose job dies with its node without a word (no process records its end):
    # a plain job standing for it, its run left running
    silent = store.create_run({}, "dies with its node", status="running")
    output = f"--output={tmp_path / 'silent-%j.out'}"  # not slurm-N.out in the checkout
    raw = slurm.command("sbatch", "--parsable", "--requeue", output, "--wrap", "sleep 300").strip()
    write_executor(store.files, silent, {"executor": "slurm", "job_id": raw})
    at_step(store, run_id, 3)
    node = slurm.hostname
    try:
        slurm.command("scontrol", "update", f"NodeName={node}", "State=DOWN", "Reason=disk on fire")
        record = wait_status(store, run_id, {"finished", "failed", "cancelled", "lost"}, 90)
        ended = accounting_states([job])  # read while SLURM holds the requeued job pending
        reap_lost(store, max_age_s=3600)  # squeue: pending again; sacct: NODE_FAIL
        assert store.get_run(silent).status_message == f"SLURM: the node of job {raw} failed"
    finally:
        slurm.command("scancel", job, raw)  # SLURM requeued them: they must not start again
        slurm.return_node()
    assert record.status == "lost", record.status_message
    step = int(record.status_message.rsplit(" ", 1)[-1])
    assert record.status_message == f"SLURM: node {node} (disk on fire) failed at step {step}"
    assert step >= 3
    assert ended[job].state == "NODE_FAIL"


def test_sacct_parsable2_output_gives_each_jobs_last_state_and_reason() -> None:
    # ``sacct -n -P -X -o JobID,State,Reason`` with accounting storage (the documented
    # --parsable2 form) and ``sacct -c`` lines of a requeued job's two attempts
    output = "41|NODE_FAIL|None\n42|CANCELLED by 0|Priority\n42.batch|CANCELLED|\n43|TIMEOUT|\n"
    output += "44|NODE_FAIL|\n44|COMPLETED|\n"
    states = _parse(output)
    assert sorted(states) == ["41", "42", "43", "44"]
    assert (states["42"].state, states["42"].reason) == ("CANCELLED", "Priority")
    assert (states["41"].state, states["44"].state) == ("NODE_FAIL", "COMPLETED")
