"""The store at a lab's scale: stores of 1k, 10k and 50k runs.

For each size it fills a private store (run folders and the run catalogue written
directly, as a year of runs would have left them: meta, status, user and run-info
files per run, final values and findings stored with each ended run; plus ``--live``
runs created through the store and left queued or running, with heartbeats), then
prints:

* reaper pass: ``worker.reaper.reap_lost`` on a fresh ``RunStore`` (what each worker
  does every 5 s), median of 5;
* listing: ``RunStore.list_runs()`` (every run as a record) and the Runs page's
  catalogue read (``runs_frame``, newest 200), medians of 3;
* ``spherescope status``: the command's wall time (a new interpreter; the broker
  unreachable, so it reports that at once), median of 3, with ``spherescope --help``'s
  as its floor (the interpreter and the command's imports), and its store part alone
  (reap + the running and queued listings) in this process;
* Runs page first content: the dashboard as ``spherescope up`` serves it
  (``worker.stack.app_argv``) on the store, headless Chromium, navigation start → the
  Runs table's first screenful, median of 3 fresh loads (each a new Streamlit session),
  with the floor (a bare Streamlit page with a 20-row table, ``bench/floor_page.py``)
  measured in the same browser, and the ratio to both;
* search: ``query_runs(search=...)`` over every run (name, id, notes, tags, config),
  first (the catalogue's snapshot read) and then warm (median of 3).

Each figure measured in this process or its commands is printed as wall time and as
CPU time (this process and its children, median): on a shared machine the wall time
grows with the load, the CPU time much less.

Targets at 50,000 runs: reaper pass ≤ 50 ms, status ≤ 1 s, Runs page first content
≤ 1.5 s and within 1.3× of its time at 1,000 runs. The machine's load is printed.

    .venv/bin/python bench/store_scale.py [--sizes 1000,10000,50000] [--live 10]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "bench")]

from dashboard_speed import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    FIRST_CONTENT,
    FIRST_SEEN_JS,
    FLOOR_CONTENT,
    _loads,
    free_port,
    start_floor,
    wait_healthy,
)

from db.catalogue import journal, snapshot  # noqa: E402
from db.catalogue.rows import row_from_record  # noqa: E402
from db.records import build_record  # noqa: E402
from db.store import RunStore  # noqa: E402

CONFIG = {
    "data": {"name": "digits", "batch_size": 64, "samples_per_class": 4},
    "model": {"name": "mlp", "embedding_dim": 64},
    "objective": {"kind": "loss", "name": "triplet", "options": {"margin": 0.2}},
    "optimizer": {"name": "adam", "lr": 0.001},
    "regularizer": {"name": "sec", "weight": 0.5},
    "training": {"steps": 2000, "seed": 0},
}
STATUSES = ("finished",) * 8 + ("failed", "cancelled")


def fill(home: Path, count: int, live: int) -> None:
    """``count`` ended runs written directly, and ``live`` queued/running ones made
    through the store (so they have heartbeats)."""
    store = RunStore(home)
    now = time.time() - count
    rows = []
    for index in range(count - live):
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now + index))
        run_id = f"{stamp}-{uuid.uuid4().hex[:8]}"
        folder = store.runs_dir / run_id
        folder.mkdir()
        config = {**CONFIG, "optimizer": {"name": "adam", "lr": [1e-3, 3e-4, 1e-4][index % 3]},
                  "training": {"steps": 2000, "seed": index % 5}}  # fmt: skip
        status = STATUSES[index % len(STATUSES)]
        sweep = f"sweep-{index // 100}"
        meta = {"run_id": run_id, "name": f"run {index}", "kind": "train", "config": config,
                "sweep_id": sweep, "created_at": now + index, "initial_status": "queued",
                "project": f"project-{index % 4}"}  # fmt: skip
        state = {"status": status, "message": "", "started_at": now + index + 1,
                 "finished_at": now + index + 600, "host": "gpu", "device": "cuda"}  # fmt: skip
        user = {"tags": ["lab", f"arm:{index % 4}", f"study:s{index // 850}"], "notes": ""}
        value = 0.5 + (index % 97) / 300
        info = {"final_metrics": {"eval:recall@1": value, "eval:nmi": value / 2,
                                  "train:loss/total": 1 - value}, "findings": []}  # fmt: skip
        for name, doc in (("meta.json", meta), ("status.json", state), ("user.json", user),
                          ("run_info.json", info)):  # fmt: skip
            (folder / name).write_text(json.dumps(doc), "utf-8")
        record = build_record(run_id, meta, state, None, user, info)
        rows.append(row_from_record(record, project=meta["project"], disk_bytes=40_000,
                                    read_ns=time.time_ns()))  # fmt: skip
    with journal.compaction_lock(store.files):
        snapshot._write(store.files, snapshot.to_table(rows), journal.delta_files(store.files))
    for index in range(live):
        run_id = store.create_run(CONFIG, f"live {index}", tags=["lab"], project="project-0")
        if index % 2:
            store.start_run(run_id, host="gpu-box", pid=os.getpid())
            store.heartbeat(run_id, 10, 2000)


#: figure → median CPU seconds (this process and its children): on a shared machine the
#: wall time says more about the load than about the code
CPU: dict[str, float] = {}


def _cpu() -> float:
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def median_time(action, repeats: int, name: str = "") -> float:
    times, cpu = [], []
    for _ in range(repeats):
        started, used = time.perf_counter(), _cpu()
        action()
        times.append(time.perf_counter() - started)
        cpu.append(_cpu() - used)
    if name:
        CPU[name] = statistics.median(cpu)
    return statistics.median(times)


def status_command(home: Path, repeats: int, action: str = "status", name: str = "") -> float:
    env = {**os.environ, "SPHERESCOPE_HOME": str(home), "PYTHONPATH": str(REPO),
           "REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"}  # fmt: skip
    command = [sys.executable, "-m", "worker.cli", action]

    def once() -> None:
        subprocess.run(command, env=env, cwd=REPO, capture_output=True, timeout=120)

    return median_time(once, repeats, name)


def page_loads(home: Path, floor_base: str, repeats: int) -> dict[str, float]:
    """Median seconds to the Runs table's first screenful, and to the floor's tables."""
    from playwright.sync_api import sync_playwright

    from worker.stack import app_argv

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "SPHERESCOPE_HOME": str(home), "PYTHONPATH": str(REPO)}
    log = home.parent / "dashboard.log"
    server = subprocess.Popen(app_argv("127.0.0.1", port), cwd=REPO, env=env,
                              stdout=log.open("w"), stderr=subprocess.STDOUT)  # fmt: skip
    try:
        wait_healthy(base, server)
        time.sleep(2)  # the server's warm start (app/warmup.py) reads the Runs table
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": 1400, "height": 900})
            drawn = sorted({FIRST_CONTENT["runs"][1], *(d for _, d in FLOOR_CONTENT.values())})
            context.add_init_script(FIRST_SEEN_JS % json.dumps(drawn))
            page = context.new_page()
            pages = {"runs": (base + "/", FIRST_CONTENT["runs"])}
            pages |= {f"floor {n}": (f"{floor_base}/?table={n}", FLOOR_CONTENT[n])
                      for n in FLOOR_CONTENT}  # fmt: skip
            result = _loads(page, pages, repeats)
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    return {name: figures[0] for name, figures in result.items()}


def measure(size: int, live: int, floor_base: str, repeats: int) -> dict[str, float]:
    from db.catalogue.query import query_runs, runs_frame
    from worker.reaper import reap_lost
    from worker.status import collect_status

    root = Path(tempfile.mkdtemp(prefix=f"store-scale-{size}-"))
    home = root / "home"
    try:
        started = time.perf_counter()
        fill(home, size, live)
        print(f"\n{size} runs: filled in {time.perf_counter() - started:.0f} s")
        figures = {
            "reaper pass": median_time(lambda: reap_lost(RunStore(home)), 5, "reaper pass"),
        }
        store = RunStore(home)

        def timed(name: str, action, repeats: int) -> None:
            figures[name] = median_time(action, repeats, name)

        timed("first catalogue read (snapshot)", lambda: query_runs(store, search="run 4242"), 1)
        timed("search (warm)", lambda: query_runs(store, search="run 4242"), 3)
        timed("listing: list_runs() records", store.list_runs, 3)
        timed("listing: Runs page (newest 200)", lambda: runs_frame(store, limit=200), 3)
        os.environ["REDIS_URL"] = f"redis://127.0.0.1:{free_port()}/0"
        timed(
            "status: store part (in process)",
            lambda: collect_status(RunStore(home), timeout_s=0.1),
            3,
        )
        status = "spherescope status (command)"
        figures[status] = status_command(home, repeats, name=status)
        floor = "floor: spherescope --help"
        figures[floor] = status_command(home, repeats, "--help", name=floor)
        loads = page_loads(home, floor_base, repeats)
        figures["Runs page first content"] = loads["runs"]
        figures["floor grid"] = loads["floor grid"]
        figures["floor markdown"] = loads["floor markdown"]
        print(f"  {'':<36} {'wall':>12} {'CPU':>12}")
        for name, seconds in figures.items():
            cpu = f"{CPU[name] * 1000:9.1f} ms" if name in CPU else f"{'-':>12}"
            print(f"  {name:<36} {seconds * 1000:9.1f} ms {cpu}")
        print(f"  Runs page / floor grid: {loads['runs'] / loads['floor grid']:.2f}x; "
              f"/ floor markdown: {loads['runs'] / loads['floor markdown']:.2f}x")  # fmt: skip
        return figures
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,50000", help="store sizes, comma-separated")
    parser.add_argument("--live", type=int, default=10, help="queued and running runs in each")
    parser.add_argument("--repeats", type=int, default=3, help="page loads / commands (median)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    print(f"load average before: {os.getloadavg()}")
    floor_root = Path(tempfile.mkdtemp(prefix="store-scale-floor-"))
    floor_port = free_port()
    floor_base = f"http://127.0.0.1:{floor_port}"
    floor = start_floor(floor_port, floor_root / "floor.log")
    results = {}
    try:
        wait_healthy(floor_base, floor)
        for size in sizes:
            results[size] = measure(size, args.live, floor_base, args.repeats)
    finally:
        floor.terminate()
        floor.wait(timeout=30)
        shutil.rmtree(floor_root, ignore_errors=True)
    print(f"\nload average after: {os.getloadavg()}")
    first, last = sizes[0], sizes[-1]
    page = "Runs page first content"
    print(f"\n{page} at {last} / at {first}: "
          f"{results[last][page] / results[first][page]:.2f}x (target <= 1.3x)")  # fmt: skip
    verdicts = (
        ("reaper pass", 0.050),
        ("spherescope status (command)", 1.0),
        (page, 1.5),
    )
    for name, target in verdicts:
        value = results[last][name]
        print(f"{name} at {last}: {value * 1000:.0f} ms (target <= {target * 1000:.0f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
