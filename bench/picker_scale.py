"""The run pickers' and the Runs menus' catalogue queries at lab scale, against what the
pickers read before (every run of the store, ``runs_frame`` without a limit).

    python bench/picker_scale.py [--runs 10000]

Fills a store as ``bench/store_scale.py`` does and prints, per query, the median time
of 5 and its ratio to the old full read, measured in this one run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "bench")]

from store_scale import fill  # noqa: E402

from db.catalogue.query import config_keys, pick_list, runs_frame  # noqa: E402
from db.store import RunStore  # noqa: E402


def median_s(action: Callable[[], object], repeats: int) -> float:
    action()  # the first read of the catalogue's table
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        fill(home, args.runs, 0)
        store = RunStore(home)
        old = median_s(lambda: runs_frame(store), 2)
        print(f"{args.runs:,} runs; before: every run read for a picker {old * 1000:.0f} ms")
        queries = {
            "picker list (newest 50, results first)": lambda: pick_list(
                store, results_first=True, limit=50
            ),
            "picker search (50 matches)": lambda: pick_list(
                store, search="run 12", archived=None, limit=50
            ),
            "picked / linked runs by id": lambda: pick_list(
                store, run_ids=["a", "b"], archived=None, limit=None
            ),
            "config keys of every run (Runs menus)": lambda: config_keys(store),
        }
        for label, action in queries.items():
            took = median_s(action, 5)
            print(f"  {label}: {took * 1000:.0f} ms ({took / old:.3f} of before)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
