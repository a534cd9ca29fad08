"""Runs on a real SLURM cluster (see conftest): submitted with ``spherescope submit
--slurm``, followed, cancelled from the CLI and the dashboard, stopped at a time limit,
requeued and resumed as the same run; bad requests refused with nothing queued."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from slurm_cluster import DEBUG_MAX_MINUTES, SlurmCluster
from worker_fixtures import wait_for, wait_status

from db.records import RunRecord
from db.store import RunStore
from worker import cli
from worker.reaper import reap_lost

pytestmark = pytest.mark.slow

TINY = """\
[data]
name = "digits"
batch_size = 20
samples_per_class = 4
[model]
name = "mlp"
embedding_dim = 8
[objective]
kind = "loss"
name = "triplet"
[optimizer]
name = "adam"
lr = 0.001
[training]
steps = {steps}
seed = 0
checkpoint_every = {checkpoint_every}
[diagnostics]
eval_every = 100000
tracked_samples = 4
eval_max_samples = 200
"""


def config_file(tmp_path: Path, steps: int = 20, checkpoint_every: int = 0) -> str:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY.format(steps=steps, checkpoint_every=checkpoint_every))
    return str(path)


def submit(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert cli.main(["submit", *args, "--slurm", "--json"]) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])["run_id"]


def slurm_command(slurm: SlurmCluster, *args: str) -> str:
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    return done.stdout


def at_step(store: RunStore, run_id: str, least: int, timeout_s: float = 120) -> int:
    def reached() -> int | None:
        step = store.get_run(run_id).progress_step
        return step if step is not None and step >= least else None

    return wait_for(reached, timeout_s, f"run {run_id} at step {least}", interval=0.5)


def checkpoint_steps(store: RunStore, run_id: str) -> list[int]:
    folder = store.run_dir(run_id) / "checkpoints"
    return sorted(int(p.stem.split("_")[1]) for p in folder.glob("step_*.pt"))


@pytest.fixture(scope="module", autouse=True)
def side_by_side(
    slurm: SlurmCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[RunStore, str, str, RunRecord]]:
    """Two jobs submitted together when the module starts, asserted by its last test:
    one that finishes, and one stopped by its 1-minute time limit (SLURM's shortest), a
    minute that passes while the other tests run rather than on its own. Their store is
    their own (the other tests' reaper calls never see them). Yields it, their run ids
    (finishes, limited) and the first one's record just after submission."""
    folder = tmp_path_factory.mktemp("side-by-side")
    (folder / "finishes").mkdir()
    (folder / "limited").mkdir()
    limited_config = config_file(folder / "limited", steps=1_000_000, checkpoint_every=25)
    ids = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SPHERESCOPE_HOME", str(folder / "home"))
        for args in (
            (config_file(folder / "finishes", steps=15), "--time", "5"),
            (limited_config, "--time", "1"),
        ):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                assert cli.main(["submit", *args, "--slurm", "--json"]) == 0
            ids.append(json.loads(out.getvalue().strip().splitlines()[-1])["run_id"])
    store = RunStore(folder / "home")
    yield store, ids[0], ids[1], store.get_run(ids[0])


def test_bad_requests_are_refused_in_one_line_with_nothing_queued(
    slurm: SlurmCluster, store: RunStore, tmp_path: Path, capsys, monkeypatch
) -> None:
    config = config_file(tmp_path)
    before = store.run_ids()
    refusals = {
        ("--partition", "nope"): "slurm partition: 'nope' is not a partition of this cluster",
        ("--time", str(DEBUG_MAX_MINUTES + 1)): "slurm time: 31 min is above partition debug's",
        ("--gpus", "1"): "slurm gpus: 1 per node asked, partition debug's nodes have at most 0",
    }
    for options, message in refusals.items():
        assert cli.main(["submit", config, "--slurm", *options]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"error: {message}") and "\n" not in err
    monkeypatch.setenv("PATH", str(tmp_path))  # no SLURM commands on PATH
    assert cli.main(["submit", config, "--slurm"]) == 2
    assert "'sbatch' is not on PATH" in capsys.readouterr().err
    assert store.run_ids() == before


def test_a_pending_job_shows_slurms_reason_and_is_cancelled_from_the_dashboard(
    slurm: SlurmCluster, store: RunStore, tmp_path: Path, capsys
) -> None:
    from app.data.actions import cancel_run
    from app.data.slurm_states import refresh_slurm_states

    slurm_command(slurm, "scontrol", "update", "PartitionName=long", "State=DOWN")
    try:
        run_id = submit(capsys, config_file(tmp_path), "--partition", "long", "--time", "5")
        job = store.get_run(run_id).executor["job_id"]
        refresh_slurm_states(str(store.home))  # the dashboard asks SLURM, with no worker
        record = store.get_run(run_id)
        assert record.status == "queued"
        assert record.executor["scheduler"]["state"] == "PENDING"
        assert record.executor["scheduler"]["reason"] == "PartitionDown"

        cancel_run(run_id)  # what the dashboard's Cancel button calls
    finally:
        slurm_command(slurm, "scontrol", "update", "PartitionName=long", "State=UP")

    record = store.get_run(run_id)
    assert (record.status, record.status_message) == ("cancelled", "cancelled before it started")
    state = slurm_command(slurm, "squeue", "-h", "-t", "all", "-j", job, "-o", "%T").strip()
    assert state == "CANCELLED"


def test_a_requeued_job_resumes_the_same_run_then_is_cancelled_from_the_cli(
    slurm: SlurmCluster, store: RunStore, tmp_path: Path, capsys
) -> None:
    config = config_file(tmp_path, steps=1_000_000, checkpoint_every=10)
    run_id = submit(capsys, config, "--time", "10")
    job = store.get_run(run_id).executor["job_id"]
    at_step(store, run_id, 12)

    slurm_command(slurm, "scontrol", "requeue", job)

    def pending() -> bool:
        state = slurm_command(slurm, "squeue", "-h", "-j", job, "-o", "%T").strip()
        return state == "PENDING"

    wait_for(pending, 60, f"job {job} pending again", interval=0.5)
    stopped_at = checkpoint_steps(store, run_id)[-1]
    assert reap_lost(store, max_age_s=0.1) == []  # no heartbeat, but SLURM holds the job
    assert store.get_run(run_id).executor["scheduler"]["state"] == "PENDING"
    # a requeued job waits (BeginTime) before it may start again: let it start now
    slurm_command(slurm, "scontrol", "update", f"JobId={job}", "StartTime=now")
    at_step(store, run_id, stopped_at + 3)
    record = store.get_run(run_id)
    assert record.status == "running"
    assert [r["step"] for r in record.extra["requeues"]] == [stopped_at]

    assert cli.main(["cancel", run_id]) == 0
    record = wait_status(store, run_id, {"finished", "failed", "cancelled", "lost"}, 90)
    assert record.status == "cancelled", record.status_message
    last = checkpoint_steps(store, run_id)[-1]
    assert record.status_message == f"cancelled at step {last}"
    assert last > stopped_at


def test_the_reaper_asks_slurm_and_never_closes_runs_when_slurm_is_unreachable(
    slurm: SlurmCluster, store: RunStore, tmp_path: Path, monkeypatch
) -> None:
    from db.scheduler_record import write_executor

    queued = store.create_run({}, "forgotten job")
    running = store.create_run({}, "silent job", status="running")
    for run_id, job in ((queued, "999999"), (running, "999998")):
        write_executor(store.files, run_id, {"executor": "slurm", "job_id": job})
    with monkeypatch.context() as patch:
        patch.setenv("PATH", str(tmp_path))  # squeue missing: nothing known, nothing closed
        assert reap_lost(store, max_age_s=0.0) == []
    assert [store.get_run(r).status for r in (queued, running)] == ["queued", "running"]

    assert reap_lost(store, max_age_s=0.0) == [running]  # unknown job: the heartbeat rule
    record = store.get_run(queued)
    assert (record.status, record.status_message) == ("lost", "SLURM no longer knows job 999999")


def test_a_job_cancelled_outside_spherescope_ends_its_run_with_slurms_word(
    slurm: SlurmCluster, store: RunStore, tmp_path: Path, capsys
) -> None:
    slurm_command(slurm, "scontrol", "update", "PartitionName=long", "State=DOWN")
    try:
        run_id = submit(capsys, config_file(tmp_path), "--partition", "long", "--time", "5")
        job = store.get_run(run_id).executor["job_id"]
        slurm_command(slurm, "scancel", job)  # a user's own scancel: no cancel flag
    finally:
        slurm_command(slurm, "scontrol", "update", "PartitionName=long", "State=UP")
    assert reap_lost(store, max_age_s=15) == []
    record = store.get_run(run_id)
    assert (record.status, record.status_message) == ("cancelled", f"SLURM job {job} was cancelled")
    assert record.executor["scheduler"]["state"] == "CANCELLED"


def test_runs_side_by_side_one_finishes_one_fails_at_its_time_limit(
    side_by_side: tuple[RunStore, str, str, RunRecord],
) -> None:
    # both jobs ran at once (one core each) from the start of this module: asserted by
    # its last test, the 1-minute limit passes while the other tests run
    store, finishes, limited, record = side_by_side
    assert record.status in {"queued", "running"}  # queued at once; may have started already
    assert record.executor["executor"] == "slurm" and record.executor["job_id"].isdigit()
    assert record.executor["partition"] == "debug"
    assert record.executor["limits"]["time_min"] == 5
    record = wait_status(store, finishes, {"finished", "failed", "cancelled", "lost"}, 180)
    assert (record.status, record.status_message) == ("finished", "")
    assert record.progress_step == 15

    record = wait_status(store, limited, {"finished", "failed", "cancelled", "lost"}, 150)
    assert record.status == "failed"
    step = int(record.status_message.rsplit(" ", 1)[-1])
    assert record.status_message == f"SLURM time limit (1 min) reached at step {step}"
    assert step > 0 and checkpoint_steps(store, limited)[-1] == step
