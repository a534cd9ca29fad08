"""A long-lived reader recovers from files damaged or removed under it: the
damaged file is quarantined and reported, vanished files are
skipped, and the read answers with what is left instead of raising."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

from db import queries

SLOW_REMOVE = """
import os, shutil, sys, time
for folder, _, names in os.walk(sys.argv[1], topdown=False):
    for name in sorted(names, reverse=True):
        os.remove(os.path.join(folder, name))
        time.sleep(0.003)
shutil.rmtree(sys.argv[1])
"""


def _run_with_chunks(store, config, chunks: int, per_chunk: int = 10) -> str:
    run_id = store.create_run(config)
    tracker = store.tracker(run_id, compact_every=0)
    for step in range(chunks * per_chunk):
        tracker.track(float(step), "a", step)
        if step % per_chunk == per_chunk - 1:
            tracker.flush()  # one chunk
    return run_id


def _steps(store, run_ids, of: str | None = None) -> list[int]:
    frame = queries.metric_series(store, run_ids, ["a"], max_points=100_000)
    if of is not None:
        frame = frame[frame["run_id"] == of]
    return sorted(int(step) for step in frame["step"])


def test_a_chunk_damaged_after_it_was_checked_is_quarantined_and_reads_recover(store, config):
    run_id = _run_with_chunks(store, config, chunks=3)
    chunks = sorted(store.table_dir(run_id, "scalars").glob("c-*.parquet"))
    garbage = chunks[0].with_name("c-0000000999-dead.parquet")
    garbage.write_bytes(b"\x00garbage" * 50)
    assert _steps(store, [run_id]) == list(range(30))  # garbage quarantined, the rest "good"
    # Now a file already checked good is truncated (a disk error, a bad copy).
    victim = chunks[1]
    data = victim.read_bytes()
    victim.write_bytes(data[: len(data) // 2])
    assert _steps(store, [run_id]) == list(range(10)) + list(range(20, 30))
    assert any(str(victim) in problem for problem in store.problems())
    assert _steps(store, [run_id]) == list(range(10)) + list(range(20, 30))  # and stays so


def test_a_run_folder_removed_by_hand_under_a_reader_gives_no_io_errors(store, config):
    kept = _run_with_chunks(store, config, chunks=5)
    doomed = _run_with_chunks(store, config, chunks=150)
    errors: list[str] = []
    reads = {"both": 0, "after": 0}
    removed = threading.Event()
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            try:
                steps = _steps(store, [kept, doomed], of=kept)
                reads["after" if removed.is_set() else "both"] += 1
                assert steps == list(range(50)), steps
            except ValueError as error:  # the run is gone: a clear "unknown run id"
                if "unknown run id" not in str(error):
                    errors.append(repr(error))
                assert _steps(store, [kept]) == list(range(50))
            except Exception as error:
                errors.append(repr(error))

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for thread in threads:
        thread.start()
    time.sleep(0.5)
    # Removed by hand, file by file as a slow disk or network share does it.
    subprocess.run([sys.executable, "-c", SLOW_REMOVE, str(store.run_dir(doomed))], check=True)
    removed.set()
    time.sleep(1.0)
    stop.set()
    for thread in threads:
        thread.join(30)
    assert reads["both"] > 0 and errors == [], errors[:3]
