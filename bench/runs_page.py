"""How long the Runs page takes to render with many runs in the store.

Fills a private store with ``--runs`` runs (most finished with per-step scalars and
evaluations, some queued, running and failed, one sweep), then renders
``app/views/runs.py`` under Streamlit's AppTest: cold (a new server process: empty
caches) and warm (the page's 2 s listing cache expired, the file-system cache warm),
each ``--repeats`` times, and the parts of a render on their own (listing the runs,
shaping the table). Target (issue 14): ≤ 1.5 s with 500 runs. ``--warm-start`` first
does what ``app/server.py`` does when the server starts (``app/warmup.py``: imports and
the Runs table's ended-run values; not the registries, which the Runs page never uses),
so "first render" is then the first visitor's on a server started a moment before.

    .venv/bin/python bench/runs_page.py [--runs 500] [--repeats 3] [--home DIR] [--warm-start]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests" / "app")]

STEPS = 20


def fill(home: Path, count: int) -> None:
    from app_fixtures import config, scalars

    from db.store import RunStore

    store = RunStore(home)
    base = config()
    for index in range(count):
        kind = index % 10
        run_id = store.create_run(
            base, f"bench run {index}", tags=("bench",), sweep_id="sweep-bench" if kind else None
        )
        if kind == 0:
            continue  # queued
        store.set_status(run_id, "running", device="cpu")
        with store.tracker(run_id, flush_interval=0) as tracker:
            for step in range(1, STEPS + 1):
                tracker.track_many(scalars(step, 0.1 + index * 1e-4), step)
                tracker.track_progress(step, STEPS)
            tracker.track_eval({"recall@1": 0.5, "nmi": 0.4, "map@r": 0.2}, STEPS)
        if kind == 1:
            store.set_status(run_id, "failed", "RuntimeError: bench")
        elif kind != 2:  # kind 2 stays running
            store.set_status(run_id, "finished")


def render_times(repeats: int) -> tuple[float, list[float]]:
    """(first render in this process, every cache cold; later renders with Streamlit's
    caches cleared, as after their 2 s TTL: the ended runs' values stay remembered)."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=120)
    first = timed(app.run)  # the default page is Runs
    assert not app.exception, app.exception
    later = []
    for _ in range(repeats):
        st.cache_data.clear()
        later.append(timed(app.run))
        assert not app.exception and len(app.dataframe[0].value) > 0
    return first, later


def timed(function, *args) -> float:
    started = time.perf_counter()
    function(*args)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--home", type=Path, default=None, help="reuse a filled store")
    parser.add_argument("--warm-start", action="store_true", help="warm up as the server does")
    args = parser.parse_args()
    import os

    home = args.home or Path(tempfile.mkdtemp(prefix="bench-runs-")) / "home"
    os.environ["SPHERESCOPE_HOME"] = str(home)
    if not (home / "runs").exists():
        fill_s = timed(fill, home, args.runs)
        print(f"filled {args.runs} runs in {fill_s:.1f} s ({home})")

    import streamlit as st

    from app import data

    if args.warm_start:
        from app import warmup

        seconds = warmup.warm_up(warmup.STEPS[:2])  # imports, runs table
        print("warm start: " + ", ".join(f"{k} {v:.2f} s" for k, v in seconds.items()))
    first, later = render_times(args.repeats)
    print(f"runs in store: {len(data.runs())}")
    print(f"first render of a fresh process (all caches cold): {first:.3f} s")
    print(
        "renders with the page's caches expired: "
        + ", ".join(f"{r:.3f}" for r in later)
        + f" s; median {statistics.median(later):.3f} s (target ≤ 1.5 s)"
    )
    st.cache_data.clear()
    frame = data.runs()
    print(f"parts, warm: runs_table {timed(data.runs_table, frame):.3f} s")
    load = os.getloadavg()
    print(f"load average (1/5/15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
