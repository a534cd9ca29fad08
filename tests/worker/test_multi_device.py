"""Multi-device runs (``training.devices``) launched through a real worker: two gloo
rank processes under torch's elastic launcher, their statistics over the global batch,
cancel, a killed rank and a killed agent (no rank outlives it)."""

from __future__ import annotations

import os
import signal
import time
from types import SimpleNamespace

import numpy as np
import psutil
import pytest
from worker_fixtures import config, wait_for, wait_status

from db import queries
from db.store import RunStore
from sphere_engine.config import RunConfig
from sphere_engine.tracking import InMemoryTracker
from worker import cancel, launch
from worker.shutdown import STOP_REASON, stop_workers_gracefully

LONG = 1_000_000  # steps: a run that only ends when it is stopped
ENDED = {"finished", "failed", "lost", "cancelled"}

# P = 2 classes of K = 4 (one class per rank); a softmax head, whose loss is a mean over
# samples, so two ranks averaging their gradients take exactly the one-process steps.
TWO_DEVICES = {
    "data": {"batch_size": 8, "samples_per_class": 4},
    "objective": {"kind": "head", "name": "normface"},
    "training": {"devices": 2},
    "diagnostics": {"tracked_samples": 8},
}


def ranks_of(store: RunStore, run_id: str) -> list[psutil.Process]:
    """The rank processes the run's elastic agent (the worker's pool process) started."""
    agent = psutil.Process(store.get_run(run_id).extra["pid"])
    return [child for child in agent.children() if "worker.distributed_rank" in child.cmdline()]


def started_ranks(store: RunStore, run_id: str, steps: int = 3) -> list[psutil.Process]:
    wait_for(lambda: (store.get_run(run_id).progress_step or 0) >= steps, 240, f"{steps} steps")
    ranks = ranks_of(store, run_id)
    assert len(ranks) == 2, [r.cmdline() for r in ranks]
    return ranks


def all_gone(processes: list[psutil.Process], timeout_s: float = 15.0) -> None:
    _, alive = psutil.wait_procs(processes, timeout=timeout_s)
    assert not alive, f"still alive: {[p.pid for p in alive]}"


@pytest.mark.slow
def test_two_devices_log_the_statistics_of_one_process_over_the_same_global_batch(
    store, worker
) -> None:
    steps = 5
    run_id = launch(config(steps=steps, **TWO_DEVICES))
    record = wait_status(store, run_id, ENDED, 300)
    assert record.status == "finished", record.status_message
    assert record.device == "cpu ×2"

    one = config(steps=steps, **TWO_DEVICES)
    one["training"]["devices"] = 1
    reference = InMemoryTracker()
    from sphere_engine.train import run_training

    run_training(RunConfig.from_dict(one), reference)

    expected = {
        (step, name): value
        for step, name, value, _ in reference.scalars
        if not name.startswith("time/")
    }
    names = sorted({name for _, name in expected})
    assert {"norm/var", "cos/gap", "grad/norm_mean", "direction/angle_mean"} <= set(names)
    frame = queries.metric_series(store, [run_id], names, max_points=1000)
    logged = {
        (int(s), n): v for s, n, v in zip(frame["step"], frame["name"], frame["value"], strict=True)
    }
    assert set(logged) == set(expected)
    keys = sorted(expected)
    np.testing.assert_allclose(
        [logged[k] for k in keys], [expected[k] for k in keys], rtol=1e-4, atol=1e-6
    )
    # rank 0 evaluates the whole test split: the one-process evaluation
    evals = queries.eval_series(store, [run_id], ["recall@1", "norm/var", "nmi"])
    final = {name: value for step, name, value in reference.evals if step == steps}
    for name, value in zip(evals["name"], evals["value"], strict=True):
        assert value == pytest.approx(final[name], rel=1e-4, abs=1e-6), name
    assert len(queries.checkpoints(store, run_id)) == 1  # rank 0's only


@pytest.mark.slow
def test_cancel_stops_every_rank_and_the_run_ends_cancelled(store, worker) -> None:
    run_id = launch(config(steps=LONG, **TWO_DEVICES))
    ranks = started_ranks(store, run_id)

    cancel(run_id)

    record = wait_status(store, run_id, ENDED, 60)
    assert record.status == "cancelled", record.status_message
    assert record.status_message.startswith("cancelled at step ")
    all_gone(ranks)
    last = int(record.status_message.rsplit(" ", 1)[1])
    assert list(queries.checkpoints(store, run_id)["step"]) == [last]


@pytest.mark.slow
def test_a_killed_rank_fails_the_run_naming_it_and_stops_the_other(store, worker) -> None:
    run_id = launch(config(steps=LONG, **TWO_DEVICES))
    ranks = started_ranks(store, run_id)
    victim = ranks[-1]

    os.kill(victim.pid, signal.SIGKILL)

    record = wait_status(store, run_id, ENDED, 60)
    assert record.status == "failed"
    assert record.status_message.endswith(f"of 2 was killed by SIGKILL (pid {victim.pid})")
    assert record.status_message.startswith("rank ")
    all_gone(ranks)


@pytest.mark.slow
def test_a_killed_agent_takes_its_ranks_with_it(store, worker) -> None:
    run_id = launch(config(steps=LONG, **TWO_DEVICES))
    ranks = started_ranks(store, run_id)
    agent = store.get_run(run_id).extra["pid"]

    started = time.monotonic()
    os.kill(agent, signal.SIGKILL)

    all_gone(ranks, timeout_s=10)
    record = wait_status(store, run_id, ENDED, 60)
    assert record.status == "lost", record.status_message
    assert time.monotonic() - started < 60


@pytest.mark.slow
def test_the_stacks_shutdown_stops_every_rank_and_the_run_ends_cancelled(store, worker) -> None:
    run_id = launch(config(steps=LONG, **TWO_DEVICES))
    ranks = started_ranks(store, run_id)
    assert worker.process is not None
    as_child = SimpleNamespace(pid=worker.process.pid, poll=worker.process.poll)

    cancelled = stop_workers_gracefully(store, [as_child], lambda: False, grace_s=60)

    assert cancelled == [run_id]
    record = wait_status(store, run_id, ENDED, 30)
    assert record.status == "cancelled", record.status_message
    assert record.status_message.startswith(f"{STOP_REASON} at step ")
    all_gone(ranks)
    worker.process.wait(30)  # the worker's warm shutdown ended with its run
