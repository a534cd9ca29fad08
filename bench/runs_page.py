"""How long the Runs page takes to render with many runs in the store.

Fills a private store with ``--runs`` runs (most finished with per-step scalars and
evaluations, some queued, running and failed, one sweep), then renders
``app/views/runs.py`` under Streamlit's AppTest: cold (a new server process: empty
caches) and warm (the page's 2 s listing cache expired, the file-system cache warm),
each ``--repeats`` times, and the parts of a render on their own (listing the runs,
shaping the table). Target: ≤ 1.5 s with 500 runs. ``--warm-start`` first
does what ``app/server.py`` does when the server starts (``app/warmup.py``: imports and
the Runs table's ended-run values; not the registries, which the Runs page never uses),
so "first render" is then the first visitor's on a server started a moment before.

Each render is also printed as a ratio to the floor measured in the same run: a bare
Streamlit page (``bench/floor_page.py``) rendering a 20-row table, under the same
AppTest. The parts of the Runs table (``data.runs_table``) are timed one by one — the
listing, the key metric values, the findings badges, the SLURM "runs on" and
scheduler notes — so a column that made the table slower shows by name.

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


def floor_times(repeats: int) -> list[float]:
    """Renders of the bare floor page (``bench/floor_page.py``), grid and markdown,
    after a first render that imports Streamlit's elements: [grid median, markdown median]."""
    from streamlit.testing.v1 import AppTest

    medians = []
    for table in ("grid", "markdown"):
        app = AppTest.from_file(str(REPO / "bench" / "floor_page.py"), default_timeout=60)
        app.query_params["table"] = table
        app.run()
        medians.append(statistics.median(timed(app.run) for _ in range(max(repeats, 1))))
    return medians


def table_parts(repeats: int) -> dict[str, float]:
    """Median seconds of each part of ``data.runs_table`` on the store's runs, warm."""
    import streamlit as st

    from app import data
    from app.data.executor import runs_on, scheduler_note
    from app.data.findings import table_badges
    from app.data.run_metrics import key_values
    from app.data.tables import KEY_COLUMNS

    st.cache_data.clear()
    frame = data.runs()
    records = frame.reindex(
        columns=["status", "kind", "config", "started_at", "finished_at", "executor"]
    ).to_dict("records")
    live = set(frame.loc[frame["status"] == "running", "run_id"])  # as runs_table
    parts = {
        "listing (data.runs, cache cleared)": lambda: (st.cache_data.clear(), data.runs()),
        "key metric values": lambda: key_values(frame, KEY_COLUMNS),
        "findings badges": lambda: table_badges(frame, live),
        "SLURM runs on + scheduler notes": lambda: [
            (runs_on(row), scheduler_note(row)) for row in records
        ],
        "whole runs_table": lambda: data.runs_table(frame),
    }
    return {
        name: statistics.median(timed(part) for _ in range(max(repeats, 1)))
        for name, part in parts.items()
    }


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

    from app import data

    if args.warm_start:
        from app import warmup

        seconds = warmup.warm_up(warmup.STEPS[:2])  # imports, runs table
        print("warm start: " + ", ".join(f"{k} {v:.2f} s" for k, v in seconds.items()))
    first, later = render_times(args.repeats)
    grid, markdown = floor_times(args.repeats)
    median = statistics.median(later)
    print(f"runs in store: {len(data.runs())}")
    print(f"first render of a fresh process (all caches cold): {first:.3f} s")
    print(
        "renders with the page's caches expired: "
        + ", ".join(f"{r:.3f}" for r in later)
        + f" s; median {median:.3f} s (target ≤ 1.5 s)"
    )
    print(
        f"floor, a bare page with a 20-row table (same run): st.dataframe {grid:.3f} s, "
        f"markdown {markdown:.3f} s; Runs page / floor: {median / grid:.2f}× the grid "
        f"floor, {median / markdown:.2f}× the markdown floor"
    )
    print("parts of the Runs table, warm (median s):")
    for name, seconds in table_parts(args.repeats).items():
        print(f"  {name}: {seconds:.4f}")
    load = os.getloadavg()
    print(f"load average (1/5/15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
