"""The SDK in a data-parallel job: two real gloo ranks under torchrun, one run per job,
statistics of the global batch equal to those of the same batch logged by one process."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import spherescope
from db import queries
from db.store import RunStore
from tests.sphere_engine.distributed.processes import torchrun
from tests.spherescope.ddp_problem import (
    STEPS,
    evaluation_set,
    global_batch,
    loss_of,
)

pytestmark = pytest.mark.slow

JOB = Path(__file__).with_name("ddp_job.py")
EXIT_JOB = Path(__file__).with_name("exit_job.py")


def _job(
    tmp_path: Path, mode: str, attempt: int = 0, rdzv_id: str | None = None
) -> tuple[object, Path, list[dict]]:
    home, out = tmp_path / f"store-{mode}", tmp_path / f"out-{mode}-{attempt}"
    out.mkdir()
    done = torchrun(
        JOB,
        str(out),
        mode,
        env={
            "SPHERESCOPE_HOME": str(home),
            "SPHERESCOPE_HEARTBEAT_S": "0.2",
            "ATTEMPT": str(attempt),
        },
        rdzv_id=rdzv_id,
    )
    results = [json.loads(p.read_text()) for p in sorted(out.glob("rank*.json"))]
    return done, home, results


@pytest.fixture(scope="module")
def log_and_rank0(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, tuple[object, Path, list[dict]]]:
    """One torchrun job that runs mode ``log`` then mode ``rank0`` (a store each): the
    two tests below read one job, which pays torchrun's start and torch's imports once.
    Maps each mode to (the job's completed process, its store, its ranks' results)."""
    tmp_path = tmp_path_factory.mktemp("ddp")
    done, home, _ = _job(tmp_path, "log+rank0")
    out = tmp_path / "out-log+rank0-0"
    return {
        mode: (
            done,
            home / mode,
            [json.loads(p.read_text()) for p in sorted((out / mode).glob("rank*.json"))],
        )
        for mode in ("log", "rank0")
    }


def _series(store: RunStore, run_id: str) -> dict[str, list[tuple[int, float]]]:
    frame = queries.metric_series(store, run_id, queries.metric_names(store, run_id))
    return {
        name: list(zip(group["step"].tolist(), group["value"].tolist(), strict=True))
        for name, group in frame.groupby("name")
    }


def _one_process_run(home: Path) -> tuple[str, dict, dict]:
    """The same global batches and evaluation set, logged by one process."""
    with spherescope.init(name="single", home=str(home)) as run:
        for step in range(1, STEPS + 1):
            embeddings, labels = global_batch(step)
            run.log_embeddings(embeddings, labels, step=step)
            loss = loss_of(embeddings)
            loss.backward()
            run.log({"loss/total": loss.item()}, step=step)
            run.log({"rank/value": 0.0}, step=step)
        x, y, _ = evaluation_set()
        by_size = run.evaluate(x, y, step=STEPS)
        by_id = run.evaluate(x, y, step=STEPS + 1)
    return run.id, by_size, by_id


def _close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6)


def test_a_torchrun_job_is_one_run_with_the_statistics_of_the_global_batch(
    tmp_path: Path, log_and_rank0: dict[str, tuple[object, Path, list[dict]]]
) -> None:
    done, home, results = log_and_rank0["log"]
    assert done.returncode == 0, done.stderr[-4000:]
    store = RunStore(home)
    [record] = store.list_runs()
    assert record.status == "finished"
    assert [r["run_id"] for r in results] == [record.run_id] * 2
    assert record.config["spherescope_distributed"] == {
        "world_size": 2, "scope": "global", "launcher": "torchrun", "backend": "gloo",
    }  # fmt: skip
    series = _series(store, record.run_id)
    # rank r's norms are 1 + 2r: the global batch's, not either rank's
    assert [v for _, v in series["norm/mean"]] == pytest.approx([2.0] * STEPS)
    assert [v for _, v in series["norm/var"]] == pytest.approx([1.0] * STEPS)

    single_id, by_size, by_id = _one_process_run(tmp_path / "single")
    single = _series(RunStore(tmp_path / "single"), single_id)
    assert set(series) == set(single)
    assert any(name.startswith("grad/") for name in series)
    for name, values in single.items():
        got = series[name]
        assert [s for s, _ in got] == [s for s, _ in values], name
        assert all(_close(a, b) for (_, a), (_, b) in zip(got, values, strict=True)), (
            name,
            got,
            values,
        )
    for result in results:  # every rank got the metrics of the union, evaluated once
        assert result["by_size"].keys() == by_size.keys()
        assert all(_close(result["by_size"][k], v) for k, v in by_size.items())
        assert all(_close(result["by_id"][k], v) for k, v in by_id.items())
    evals = queries.eval_series(store, record.run_id)
    assert sorted(set(evals["step"])) == [STEPS, STEPS + 1]


def test_scope_rank0_records_rank_0s_own_batch_without_gathering(
    log_and_rank0: dict[str, tuple[object, Path, list[dict]]],
) -> None:
    done, home, results = log_and_rank0["rank0"]
    assert done.returncode == 0, done.stderr[-4000:]
    [record] = RunStore(home).list_runs()
    assert record.config["spherescope_distributed"]["scope"] == "rank0"
    series = _series(RunStore(home), record.run_id)
    assert [v for _, v in series["norm/mean"]] == pytest.approx([1.0] * STEPS)
    assert [v for _, v in series["norm/var"]] == pytest.approx([0.0] * STEPS, abs=1e-9)
    assert results[1]["by_size"] == {}  # evaluated on rank 0's shard, by rank 0


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("raise", "rank 1 failed: ValueError: rank 1 broke at step 2"),
        ("die", "rank 0 stopped by SIGTERM"),
    ],
)
def test_a_rank_that_fails_or_is_killed_ends_the_run_failed_naming_it(
    tmp_path: Path, mode: str, expected: str
) -> None:
    done, home, _ = _job(tmp_path, mode)
    assert done.returncode != 0
    [record] = RunStore(home).list_runs()
    assert record.status == "failed", (record.status, record.status_message, done.stderr[-3000:])
    assert expected in record.status_message
    assert record.progress_step == 2


def test_a_restart_of_the_same_elastic_job_continues_its_run(tmp_path: Path) -> None:
    failed, home, _ = _job(tmp_path, "elastic", attempt=0, rdzv_id="job-28")
    assert failed.returncode != 0
    [first] = RunStore(home).list_runs()
    assert first.status == "failed"
    done, _, results = _job(tmp_path, "elastic", attempt=1, rdzv_id="job-28")
    assert done.returncode == 0, done.stderr[-4000:]
    store = RunStore(home)
    [record] = store.list_runs()  # the restart did not start a second run
    assert record.run_id == first.run_id
    assert record.config["spherescope_distributed"]["elastic_run_id"] == "job-28"
    assert record.status == "finished", record.status_message
    assert [r["run_id"] for r in results] == [record.run_id] * 2
    assert [r["resumed_step"] for r in results] == [2, 2]  # where the first attempt stopped
    assert [s for s, _ in _series(store, record.run_id)["norm/mean"]][-1] == STEPS


def test_every_rank_exits_cleanly_after_its_run(tmp_path: Path) -> None:
    """A rank that ends its run and exits: the side channel's thread was inside a c10d
    store call, or a gloo worker was releasing the last collective's work, when the
    interpreter tore down, and torch aborted the process ("terminate called without an
    active exception", SIGABRT) in ~60 % of these 6-rank jobs on 2 cores. Now the run's
    end joins the thread and the SDK destroys the group it initialised at exit, which
    every rank's own exit hook sees (the abort itself is a race; what the hook sees is
    not, so one job suffices)."""
    done = torchrun(
        EXIT_JOB,
        str(tmp_path),
        nproc=6,  # more ranks than cores: the exits race the threads
        env={
            "SPHERESCOPE_HOME": str(tmp_path / "store"),
            "SPHERESCOPE_HEARTBEAT_S": "0.001",  # the side channel always in a call
        },
    )
    assert done.returncode == 0, done.stderr[-4000:]
    for rank in range(6):
        state = json.loads((tmp_path / f"rank{rank}.json").read_text())
        assert state == {"group_initialised": False, "job_threads": []}, (rank, state)
