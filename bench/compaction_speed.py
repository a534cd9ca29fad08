"""Compaction of a live run: tiered (what the tracker does) vs rewriting the whole run.

Two runs receive the same values (``--scalars`` per step, one flush per
``--flush-steps`` steps, as a ~500 steps/s run flushing every second); every
``--compact-every`` flushes (the tracker's default cadence) each is compacted, one in
tiers (``store.compact(run_id, full=False)``), the other into one file (what every
compaction did before tiers). The two are interleaved in one process, so load hits
both (each goes first every other time). Prints the seconds each compaction took as
the runs grow, the totals, the slowest, their ratio, and the files a reader opens at
the end.

    .venv/bin/python bench/compaction_speed.py [--steps 200000 --scalars 40]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from db.layout import scan_table  # noqa: E402
from db.schema import SCALARS  # noqa: E402
from db.store import RunStore  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=200_000)
    parser.add_argument("--scalars", type=int, default=40, help="values logged per step")
    parser.add_argument("--flush-steps", type=int, default=500, help="steps per flush")
    parser.add_argument("--compact-every", type=int, default=30, help="flushes per compaction")
    args = parser.parse_args()
    store = RunStore(Path(tempfile.mkdtemp(prefix="compaction-speed-")) / "home")
    policies = {"tiered": False, "whole run": True}  # name → full
    runs = {name: store.create_run({}, name) for name in policies}
    trackers = {
        name: store.tracker(run_id, flush_interval=1e9, compact_every=0)
        for name, run_id in runs.items()
    }
    names = [f"metric/{i:02d}" for i in range(args.scalars)]
    rng = np.random.default_rng(0)
    seconds: dict[str, list[float]] = {name: [] for name in policies}
    flushes = 0
    print(f"{args.steps:,} steps × {args.scalars} scalars, a flush every {args.flush_steps} "
          f"steps, a compaction every {args.compact_every} flushes")  # fmt: skip
    for start in range(0, args.steps, args.flush_steps):
        block = rng.random((args.flush_steps, args.scalars))
        for tracker in trackers.values():
            for offset, row in enumerate(block):
                tracker.track_many(dict(zip(names, row.tolist(), strict=True)), start + offset)
            tracker.flush()
        flushes += 1
        if flushes % args.compact_every:
            continue
        order = list(policies.items())
        if flushes // args.compact_every % 2:
            order.reverse()  # each policy goes first every other time
        for name, full in order:
            began = time.perf_counter()
            store.compact(runs[name], full=full)
            seconds[name].append(time.perf_counter() - began)
        step = start + args.flush_steps
        took = ", ".join(f"{name} {times[-1]:.2f} s" for name, times in seconds.items())
        print(f"  at {step:>9,} steps: {took}")
    for name, times in seconds.items():
        files = len(scan_table(store.table_dir(runs[name], SCALARS)).live)
        print(f"{name}: {len(times)} compactions, total {sum(times):.1f} s, slowest "
              f"{max(times):.2f} s, median {np.median(times):.2f} s; {files} scalars files "
              f"at the end")  # fmt: skip
    tiered, whole = (sum(seconds[name]) for name in policies)
    print(f"compaction time tiered / whole run: {tiered / whole:.2f} "
          f"({whole / tiered:.1f}× less time compacting)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
