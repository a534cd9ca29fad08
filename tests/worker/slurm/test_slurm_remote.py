"""A SLURM job on a cluster without the stack's folder: submitted with SPHERESCOPE_URL,
it records its run through the ingest service, while submitit's files and the
checkpoints stay in the submitting user's own folder on the cluster."""

from __future__ import annotations

import json

import pytest
from ingest_fixtures import TOKEN, Server
from slurm_cluster import SlurmCluster
from test_slurm_runs import config_file
from worker_fixtures import wait_status

from db.store import RunStore
from worker import cli
from worker.redis_server import free_port
from worker.slurm.submit import REMOTE_SLURM

pytestmark = pytest.mark.slow


def test_a_job_submitted_with_the_url_records_its_run_on_the_stack(
    slurm: SlurmCluster, tmp_path, monkeypatch, capsys
) -> None:
    server = Server(tmp_path / "stack-home", free_port())
    cluster_home = tmp_path / "cluster-home"
    try:
        monkeypatch.setenv("SPHERESCOPE_HOME", str(cluster_home))
        monkeypatch.setenv("SPHERESCOPE_URL", server.url)
        monkeypatch.setenv("SPHERESCOPE_TOKEN", TOKEN)
        config = config_file(tmp_path, steps=15, checkpoint_every=5)
        assert cli.main(["submit", config, "--slurm", "--json", "--time", "5"]) == 0
        run_id = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["run_id"]
        stack = RunStore(server.home)
        record = wait_status(stack, run_id, {"finished", "failed", "cancelled", "lost"}, 240)
    finally:
        server.close()
    assert (record.status, record.progress_step) == ("finished", 15), record.status_message
    assert record.executor["executor"] == REMOTE_SLURM and record.executor["job_id"].isdigit()
    assert record.extra.get("remote") is True
    # submitit's files and the checkpoints: on the cluster's side only
    assert any((cluster_home / "runs" / run_id / "slurm").iterdir())
    assert sorted(p.name for p in (cluster_home / "runs" / run_id / "checkpoints").iterdir())
    assert not (stack.run_dir(run_id) / "slurm").exists()
    assert not (stack.run_dir(run_id) / "checkpoints").exists()
