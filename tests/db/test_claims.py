"""Exactly one of several processes racing for one queued run starts it: the
queued → running claim is an ``O_EXCL`` file, not a read-then-write."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

from db import RunStore, layout
from db.lifecycle import RunLifecycle, RunNotStartable

RACERS = 4
ROUNDS = 8


def _race(home: str, run_ids: list[str], barrier, results) -> None:
    """Race the other racers for each run in turn (the barrier lines them up)."""
    store = RunStore(home)
    for run_id in run_ids:
        barrier.wait()
        try:
            with RunLifecycle(store, run_id, heartbeat_s=0.05):
                time.sleep(0.2)  # "training": the others must not start meanwhile
            results.put(("won", run_id))
        except RunNotStartable as skipped:
            results.put((f"skipped:{skipped.status}", run_id))


def test_processes_racing_for_a_queued_run_exactly_one_trains_it(tmp_path: Path, config):
    home = str(tmp_path / "home")
    store = RunStore(home)
    run_ids = [store.create_run(config) for _ in range(ROUNDS)]
    # forkserver: children of a clean process (a fork of this one, which has run DuckDB
    # queries, could inherit its DuckDB state mid-operation; the ended run queries it).
    # The racers race for every run in turn: a process start imports the store, which
    # is most of a round's time on a slow machine.
    context = multiprocessing.get_context("forkserver")
    results = context.Queue()
    barrier = context.Barrier(RACERS)
    racers = [
        context.Process(target=_race, args=(home, run_ids, barrier, results)) for _ in range(RACERS)
    ]
    for racer in racers:
        racer.start()
    outcomes = [results.get(timeout=120) for _ in range(RACERS * ROUNDS)]
    for racer in racers:
        racer.join(10)
    assert all(o == "won" or o.startswith("skipped:") for o, _ in outcomes), outcomes
    wins = {run_id: [o for o, r in outcomes if r == run_id].count("won") for run_id in run_ids}
    assert set(wins.values()) == {1}, wins
    assert {store.get_run(run_id).status for run_id in run_ids} == {"finished"}


def test_a_rerun_can_be_claimed_again(store, config):
    run_id = store.create_run(config)
    with RunLifecycle(store, run_id):
        assert (store.run_dir(run_id) / layout.CLAIM).is_file()
    store.set_status(run_id, "queued")
    assert not (store.run_dir(run_id) / layout.CLAIM).exists()
    with RunLifecycle(store, run_id):
        pass
    assert store.get_run(run_id).status == "finished"
