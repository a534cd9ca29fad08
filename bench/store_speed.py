"""Run-store speed, measured in one run (prints figures; no assertions).

    .venv/bin/python bench/store_speed.py [--runs 20] [--steps 20000] [--metrics 12]

1. ingest: rows/s of one writer (track_many of all metrics per step, 1 s flushes),
   measured in the main process, and per writer with 4 writer processes at once;
2. comparison query: ``metric_series`` over every run and metric downsampled to
   1,000 points per series, for uncompacted chunked runs and for compacted runs;
3. latency: from ``track`` in a writer process to visible in a reader (1 s flushes).

Targets: ingest >= 1,000,000 rows/s per writer; query <= 300 ms; latency <= 2 s.
Wall times depend on the load of the machine; the query's CPU time (summed over
DuckDB's threads) is the steadier figure: wall ≈ CPU / cores on an idle machine.

Benchmark figures (2-core machine shared with other jobs, load average 5-14 as
reported by ``uptime``; 3 runs before, 3 after; best wall / CPU in ms):

    query                         before (raw scan)          after (levels, db.levels)
    compacted, 12 metrics         668-1889 / 430-459         146-593 / 145-168
    compacted, 2 metrics          215-366 / 177-184          83-360 / 67-78
    uncompacted, 12 metrics       572-1810 / 516-665         677-951 / 422-442
    ingest, one writer            0.5-2.0 M rows/s either way (load; write path unchanged)
    track → visible latency       median 0.54-0.62 s, max <= 1.21 s

After: compacted runs are read from their levels files (1/8 of the rows at the grid
width 24 chosen here: 20,000 steps, 1,000 points → 834 buckets per series); the
grid's max step comes from Parquet footers (no scan). Uncompacted runs still scan
every raw row (running runs compact every 30 flushes, so their raw tail is short).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from db import RunStore, queries
from db.layout import scan_table

CONFIG = {"optimizer": {"name": "adam", "lr": 0.001}, "training": {"steps": 20000}}


def metric_names(count: int) -> list[str]:
    return [f"metric/{i:02d}" for i in range(count)]


def ingest(store: RunStore, steps: int, metrics: int, chunk_every: int = 0) -> float:
    """Write one run; returns rows/s. ``chunk_every`` > 0 forces a flush every that many
    steps (to build chunked runs as a slow trainer would) and disables compaction."""
    run_id = store.create_run(CONFIG, status="running")
    options = {"compact_every": 0} if chunk_every else {}
    tracker = store.tracker(run_id, flush_interval=1.0, **options)
    names = metric_names(metrics)
    start = time.perf_counter()
    for step in range(steps):
        tracker.track_many({name: step + i * 0.5 for i, name in enumerate(names)}, step)
        if chunk_every and step % chunk_every == chunk_every - 1:
            tracker.flush()
    tracker.flush()
    return steps * metrics / (time.perf_counter() - start)


def _ingest_worker(home: str, steps: int, metrics: int, queue: mp.Queue) -> None:
    queue.put(ingest(RunStore(home), steps, metrics))


def parallel_ingest(home: str, writers: int, steps: int, metrics: int) -> list[float]:
    context = mp.get_context("spawn")
    queue = context.Queue()
    processes = [
        context.Process(target=_ingest_worker, args=(home, steps, metrics, queue))
        for _ in range(writers)
    ]
    for process in processes:
        process.start()
    rates = [queue.get() for _ in processes]
    for process in processes:
        process.join()
    return rates


def time_query(store: RunStore, run_ids: list[str], names: list[str], repeats: int = 5):
    """Best and median wall ms, best CPU ms (all DuckDB threads), rows returned."""
    times, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        frame = queries.metric_series(store, run_ids, names, max_points=1000)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return min(times) * 1000, statistics.median(times) * 1000, min(cpu) * 1000, len(frame)


def _latency_writer(home: str, run_id: str, seconds: float) -> None:
    store = RunStore(home)
    tracker = store.tracker(run_id, flush_interval=1.0)
    step = 0
    end = time.time() + seconds
    while time.time() < end:
        tracker.track_many({"loss/total": float(step)}, step)
        step += 1
        time.sleep(0.001)
    tracker.flush()


def latency(store: RunStore, seconds: float = 8.0) -> list[float]:
    """Seconds from track (the row's wall time) to first seen by a polling reader."""
    run_id = store.create_run(CONFIG, status="running")
    context = mp.get_context("spawn")
    writer = context.Process(target=_latency_writer, args=(str(store.home), run_id, seconds))
    writer.start()
    seen_step = -1
    delays = []
    while writer.is_alive():
        frame = queries.metric_series(store, [run_id], ["loss/total"], max_points=10**9)
        now = time.time()
        fresh = frame[frame["step"] > seen_step]
        if len(fresh):
            delays.extend((now - fresh["wall_time"]).tolist())
            seen_step = int(fresh["step"].max())
        time.sleep(0.05)
    writer.join()
    return delays


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--metrics", type=int, default=12)
    parser.add_argument("--chunks", type=int, default=30, help="chunks per uncompacted run")
    args = parser.parse_args()
    names = metric_names(args.metrics)
    with tempfile.TemporaryDirectory(prefix="store-bench-") as home:
        store = RunStore(home)
        rows = args.steps * args.metrics
        print(f"store: {home}  ({args.runs} runs × {args.steps} steps × {args.metrics} metrics)")

        rate = ingest(store, 5 * args.steps, args.metrics)
        print(f"ingest, one writer:            {rate / 1e6:6.2f} M rows/s  (target >= 1)")
        rates = parallel_ingest(home, 4, args.steps, args.metrics)
        print(
            "ingest, 4 writer processes:    "
            + ", ".join(f"{r / 1e6:.2f}" for r in rates)
            + " M rows/s per writer"
        )

        chunked = RunStore(Path(home) / "chunked")
        start = time.perf_counter()
        for _ in range(args.runs):
            ingest(chunked, args.steps, args.metrics, chunk_every=args.steps // args.chunks)
        build = time.perf_counter() - start
        run_ids = chunked.run_ids()
        files = sum(len(scan_table(chunked.table_dir(r, "scalars")).live) for r in run_ids)
        print(
            f"built {args.runs} chunked runs ({args.runs * rows:,} rows, {files} files) "
            f"in {build:.1f} s"
        )
        for label, selected in (("all metrics", names), ("2 metrics", names[:2])):
            best, median, cpu, count = time_query(chunked, run_ids, selected)
            print(
                f"query, uncompacted, {label:11s}: best {best:5.0f} ms, median {median:5.0f} ms,"
                f" CPU {cpu:5.0f} ms ({count} rows)  (target <= 300)"
            )

        start = time.perf_counter()
        for run_id in run_ids:
            chunked.compact(run_id)
        print(f"compacted {args.runs} runs in {time.perf_counter() - start:.1f} s")
        for label, selected in (("all metrics", names), ("2 metrics", names[:2])):
            best, median, cpu, count = time_query(chunked, run_ids, selected)
            print(
                f"query, compacted,   {label:11s}: best {best:5.0f} ms, median {median:5.0f} ms,"
                f" CPU {cpu:5.0f} ms ({count} rows)  (target <= 300)"
            )

        delays = latency(store)
        print(
            f"track → visible latency: median {statistics.median(delays):.2f} s, "
            f"max {max(delays):.2f} s over {len(delays)} rows  (target <= 2)"
        )


if __name__ == "__main__":
    main()
