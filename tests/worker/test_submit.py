"""launch / launch_sweep / cancel against a real Redis and a real worker process."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import redis
from worker_fixtures import WorkerProcess, config, wait_for, wait_status

from db import queries
from db.store import RunStore
from sphere_engine.config import RunConfig
from worker import cancel, launch, launch_sweep
from worker.tasks import train_run

LONG = 1_000_000  # steps: a run that only ends when it is stopped


def logged_steps(store: RunStore, run_id: str, name: str = "loss/total") -> list[int]:
    frame = queries.metric_series(store, [run_id], [name], max_points=1_000_000)
    return sorted(int(step) for step in frame["step"])


def test_launched_run_finishes_with_its_metrics_in_the_store(store, worker) -> None:
    run_id = launch(config(steps=30), name="smoke", tags=["ci"])

    record = wait_status(store, run_id, {"finished", "failed", "lost"}, 120)

    assert record.status == "finished", record.status_message
    assert (record.name, record.tags, record.device) == ("smoke", ["ci"], "cpu")
    assert (record.progress_step, record.progress_total) == (30, 30)
    assert logged_steps(store, run_id) == list(range(1, 31))
    final = queries.final_metrics(store, [run_id], ["recall@1"])
    assert 0.0 < final.loc[0, "recall@1"] <= 1.0
    assert record.config["training"]["steps"] == 30


def test_cancel_stops_a_running_run_within_5_s_and_keeps_its_data(store, worker) -> None:
    run_id = launch(config(steps=LONG))
    wait_for(lambda: (store.get_run(run_id).progress_step or 0) >= 5, 120, "training steps")

    started = time.monotonic()
    cancel(run_id)
    record = wait_status(store, run_id, {"cancelled", "finished", "failed", "lost"}, 10)
    elapsed = time.monotonic() - started

    assert record.status == "cancelled", record.status_message
    assert elapsed <= 5.0, f"cancel took {elapsed:.1f} s"
    steps = logged_steps(store, run_id)
    assert len(steps) >= 5 and steps == list(range(1, steps[-1] + 1))
    assert record.status_message == f"cancelled at step {steps[-1]}"
    checkpoint = queries.checkpoints(store, run_id)
    assert list(checkpoint["step"]) == [steps[-1]]
    assert Path(checkpoint["path"].iloc[0]).is_file()


def test_a_queued_run_cancelled_never_starts(store, worker: WorkerProcess) -> None:
    # Two long runs fill the worker's two pool processes; the third waits in Redis.
    busy = [launch(config(steps=LONG)) for _ in range(2)]
    for run_id in busy:
        wait_status(store, run_id, {"running"}, 120)
    offset = len(worker.log_text())
    waiting = launch(config(steps=30))

    assert cancel(waiting) == "cancelled"
    for run_id in busy:
        cancel(run_id)
    for run_id in busy:
        assert wait_status(store, run_id, {"cancelled"}, 10).status == "cancelled"
    # The worker takes the waiting message once a process is free, and drops it.
    wait_for(lambda: waiting in worker.log_text(offset), 120, "the worker to take the message")
    time.sleep(2.0)  # had it started, it would be running by now

    record = store.get_run(waiting)
    assert (record.status, record.started_at) == ("cancelled", None)
    assert record.status_message == "cancelled before it started"
    assert logged_steps(store, waiting) == []


def test_four_runs_launched_at_once_all_finish_with_complete_data(store, worker) -> None:
    sweep_id, run_ids = launch_sweep(
        config(steps=40), {"optimizer.lr": [1e-3, 3e-3]}, seeds=[0, 1], name="grid"
    )

    records = [wait_status(store, r, {"finished", "failed", "lost"}, 240) for r in run_ids]

    assert [r.status for r in records] == ["finished"] * 4, [r.status_message for r in records]
    assert {r.sweep_id for r in records} == {sweep_id}
    combos = {(r.config["optimizer"]["lr"], r.config["training"]["seed"]) for r in records}
    assert combos == {(1e-3, 0), (1e-3, 1), (3e-3, 0), (3e-3, 1)}
    assert {r.name for r in records} == {
        f"grid optimizer.lr={lr} seed={seed}" for lr, seed in combos
    }
    for run_id in run_ids:
        assert logged_steps(store, run_id) == list(range(1, 41))
        assert len(logged_steps(store, run_id, "norm/var")) == 40
    evals = queries.eval_series(store, run_ids, ["recall@1"])
    assert sorted(evals["run_id"]) == sorted(run_ids)
    assert set(evals["step"]) == {40}


@pytest.fixture
def spy_enqueue(monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    calls: list[tuple] = []
    monkeypatch.setattr(train_run, "apply_async", lambda *a, **k: calls.append((a, k)))
    return calls


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (config(steps=0), r"training\.steps: 0 is below the minimum 1"),
        (config(optimizer={"name": "lion"}), r"optimizer\.name: 'lion' is not allowed"),
        (config(objective={"name": "no-such-loss"}), r"no-such-loss"),
        # Registry, option and data checks (validate(), not from_dict) also run at launch.
        (
            config(objective={"options": {"margin": -1}}),
            r"^objective\.options\.margin: -1\.0 is out of range; must be in \[0, 2\]$",
        ),
        (config(data={"samples_per_class": 1}), r"pair loss 'triplet' needs at least 2"),
        # A RunConfig that passed from_dict is still validated.
        (
            RunConfig.from_dict(config(regularizer={"name": "secc", "weight": 1.0})),
            r"^regularizer\.name: unknown regularizer 'secc'",
        ),
        # Non-finite numbers (NaN passes `<` range checks) and a missing dataset root.
        (config(optimizer={"lr": float("nan")}), r"^optimizer\.lr: nan is not a finite number$"),
        (config(optimizer={"momentum": float("inf")}), r"^optimizer\.momentum: inf is not a fin"),
        (
            config(regularizer={"name": "sec", "weight": float("nan")}),
            r"^regularizer\.weight: nan is not a finite number$",
        ),
        (
            config(objective={"options": {"margin": float("-inf")}}),
            r"^objective\.options\.margin: -inf is not a finite number$",
        ),
        (
            config(data={"name": "mnist", "root": "/nonexistent", "samples_per_class": 4}),
            r"^data\.root: MNIST files not found in '/nonexistent/MNIST/raw'",
        ),
        ({"trainin": {}}, r"trainin: unknown config section"),
        ("not a dict", r"expected a dict or a RunConfig"),
    ],
)
def test_bad_configs_are_rejected_with_nothing_recorded_or_enqueued(
    store, spy_enqueue, bad, message
) -> None:
    before = store.run_ids()
    with pytest.raises(ValueError, match=message):
        launch(bad)
    assert store.run_ids() == before
    assert spy_enqueue == []


def test_a_sweep_with_one_bad_combination_records_nothing(store, spy_enqueue) -> None:
    before = store.run_ids()
    with pytest.raises(
        ValueError, match=r"sweep combination training\.steps=0 seed=0: training\.steps: 0 is below"
    ):
        launch_sweep(config(), {"training.steps": [10, 0]}, seeds=[0, 1])
    with pytest.raises(ValueError, match=r"expected a non-empty list"):
        launch_sweep(config(), {"optimizer.lr": []}, seeds=[0])
    with pytest.raises(
        ValueError,
        match=r"sweep combination objective\.options\.margin=-1: objective\.options\.margin: ",
    ):
        launch_sweep(config(), {"objective.options.margin": [0.1, -1]}, seeds=[])
    assert store.run_ids() == before
    assert spy_enqueue == []


def test_launch_accepts_a_run_config_and_routes_by_device(store, spy_enqueue, redis_server):
    launch(RunConfig.from_dict(config()))
    launch(config(training={"device": "cuda"}))
    client = redis.Redis.from_url(redis_server.url)
    client.set("spherescope:alive:gpu:fake@host", "1", px=60_000)
    try:
        launch(config(training={"device": "auto"}))
    finally:
        client.delete("spherescope:alive:gpu:fake@host")
    launch(config(training={"device": "auto"}))

    queues = [kwargs["queue"] for _, kwargs in spy_enqueue]
    assert queues == ["cpu", "gpu", "gpu", "cpu"]
    run_ids = [kwargs["task_id"] for _, kwargs in spy_enqueue]
    assert [store.get_run(r).status for r in run_ids] == ["queued"] * 4
    assert [args for args, _ in spy_enqueue] == [((r,),) for r in run_ids]
