"""Several writer processes, a reader querying all along, and a writer killed mid-write."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from db import queries
from db.reader import query_arrow

WRITER = Path(__file__).with_name("writer_process.py")
WRITERS, STEPS, METRICS = 4, 20_000, 12


def _start_writer(store, run_id, *extra: str, interval: str = "0.02") -> subprocess.Popen:
    args = [sys.executable, str(WRITER), str(store.home), run_id, str(STEPS), str(METRICS)]
    return subprocess.Popen(
        [*args, interval, *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_parallel_writers_and_a_reader(store, config):
    runs = [store.create_run(config, f"writer-{i}") for i in range(WRITERS)]
    names = [f"metric/{i:02d}" for i in range(METRICS)]
    writers = [_start_writer(store, run_id) for run_id in runs]
    errors: list[str] = []
    seen: dict[str, int] = dict.fromkeys(runs, 0)
    queries_done = 0
    while any(w.poll() is None for w in writers) or queries_done < 3:
        try:
            frame = queries.metric_series(store, runs, names, max_points=200)
            for (run_id, _), count in frame.attrs["total_points"].items():
                assert count <= STEPS, f"{run_id}: {count} rows for one metric"
            per_run = frame.attrs["total_points"]
            for run_id in runs:
                rows = sum(per_run.get((run_id, name), 0) for name in names)
                # Rows only ever appear, even while chunks are compacted away under us.
                assert rows >= seen[run_id], f"{run_id}: {rows} rows after {seen[run_id]}"
                seen[run_id] = rows
            queries.list_runs(store)
            queries.final_metrics(store, runs, names[:2])
        except Exception as error:
            errors.append(f"{type(error).__name__}: {error}")
        queries_done += 1
    outputs = [w.communicate() for w in writers]
    assert [w.returncode for w in writers] == [0] * WRITERS, outputs
    assert errors == []
    assert queries_done > 3
    assert store.problems() == []
    for run_id in runs:
        data = query_arrow(
            store, {"s": ("scalars", [run_id])}, "SELECT step, name, value FROM s"
        ).to_pandas()
        assert len(data) == STEPS * METRICS
        assert not data.duplicated(["step", "name"]).any()
        index = data["name"].str[-2:].astype(int)
        assert (data["value"] == data["step"] * 1000.0 + index).all()
        record = store.get_run(run_id)
        assert record.status == "finished" and record.progress_step == STEPS
        assert len(list(store.table_dir(run_id, "scalars").iterdir())) == 1  # compacted


def test_writer_killed_mid_write_loses_only_unflushed_rows(store, config, tmp_path):
    run_id = store.create_run(config)
    progress = tmp_path / "flushed.txt"
    writer = _start_writer(store, run_id, str(progress), interval="1000")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # wait for a few completed flushes
        if progress.exists() and len(progress.read_text().split()) >= 4:
            break
        time.sleep(0.01)
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    assert writer.returncode == -signal.SIGKILL
    lines = progress.read_text().splitlines()
    last_flushed = int(lines[-1]) if lines[-1] else int(lines[-2])

    data = query_arrow(store, {"s": ("scalars", [run_id])}, "SELECT step, name FROM s")
    frame: pd.DataFrame = data.to_pandas()
    steps = frame.groupby("step")["name"].count()
    # Everything up to the last completed flush is there, once...
    assert steps.index.max() >= last_flushed
    assert (steps == METRICS).all()  # ...and only whole flushes: no partial chunk read
    assert list(steps.index) == list(range(steps.index.max() + 1))
    assert not frame.duplicated().any()
    assert store.problems() == []
    series = queries.metric_series(store, run_id, ["metric/00"], max_points=10)
    assert series.attrs["total_points"] == {(run_id, "metric/00"): len(steps)}
    assert 7 <= len(series) <= 10  # at least 2/3 of max_points (see db.levels.step_grid)
    assert store.get_run(run_id).status == "running"  # until someone marks it lost
    assert store.mark_lost_runs(max_silence_s=0) == [run_id]
