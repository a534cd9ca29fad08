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


def _race(home: str, run_id: str, barrier, results) -> None:
    store = RunStore(home)
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
    # forkserver: children of a clean process (a fork of this one, which has run DuckDB
    # queries, could inherit its DuckDB state mid-operation; the ended run queries it)
    context = multiprocessing.get_context("forkserver")
    results = context.Queue()
    wins = {}
    for _ in range(ROUNDS):
        run_id = store.create_run(config)
        barrier = context.Barrier(RACERS)
        racers = [
            context.Process(target=_race, args=(home, run_id, barrier, results))
            for _ in range(RACERS)
        ]
        for racer in racers:
            racer.start()
        outcomes = [results.get(timeout=60)[0] for _ in racers]
        for racer in racers:
            racer.join(10)
        wins[run_id] = outcomes.count("won")
        assert all(o == "won" or o.startswith("skipped:") for o in outcomes), outcomes
        assert store.get_run(run_id).status == "finished"
    assert set(wins.values()) == {1}, wins


def test_a_rerun_can_be_claimed_again(store, config):
    run_id = store.create_run(config)
    with RunLifecycle(store, run_id):
        assert (store.run_dir(run_id) / layout.CLAIM).is_file()
    store.set_status(run_id, "queued")
    assert not (store.run_dir(run_id) / layout.CLAIM).exists()
    with RunLifecycle(store, run_id):
        pass
    assert store.get_run(run_id).status == "finished"
