"""Dashboard speed: the real stack, a real browser, 50 runs, runs training.

It fills a private store with ``--stored`` finished synthetic runs (the Run page's
diagnostics, evaluations and a snapshot each), starts ``spherescope up`` on it (private
Redis, CPU worker(s), Streamlit), launches ``--training`` long digits runs, then, in one
session of headless Chromium:

1. first meaningful content of every page: navigation start → the page's first chart
   or table (Runs, Run, Compare, Geometry; Launch: its form; Explorer, Report: their
   first table, chart or notice), as Playwright observes it and as the page's own
   clock records it drawn (a chart: once Vega has drawn it); and the same for the
   floor, a bare Streamlit page with a 20-row table (``bench/floor_page.py``, its own
   server, the same browser) as a grid and as a markdown table: every page is printed
   as a ratio to both;
2. the first watched run's training speed unwatched (nobody on a Run page) and watched
   (the ``--tabs`` tabs on their live Run pages), as steps/s from the store's progress, in
   ``--rounds`` rounds of an unwatched then a watched window: the run's speed drifts
   as it grows (its store compactions take longer), which a single unwatched window
   followed by a single watched one counted against watching;
3. the server's CPU (Streamlit process, user + system) in both kinds of window, per tab, and
   the CPU of each part in both windows (server, Chromium, worker with its training
   processes, Redis, this script with Playwright's driver, and the whole machine);
4. with ``--tabs`` tabs each on the live Run page of its own run (tab i: run i) while
   ``--training`` runs train, the lag from a step being logged (its wall time in the
   store) to the tab drawing it
   (the frame after the Run page's "up to step N" caption changed, which each tab
   records itself, ``DRAWN_STEPS_JS``), every 0.25 s of the watched windows: how long
   the oldest step not yet drawn had been logged (0 when none).

Targets: first content ≤ 1.5 s; CPU per watching tab ≤ 10 % of a core; watched speed ≥
80 % of unwatched; lag p90 ≤ 2 s. All figures come from the one run of this script;
the machine's load average is printed with them (the machine may be shared).

    .venv/bin/python bench/dashboard_speed.py [--stored 50 --training 4 --tabs 2]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.health import wait_until_answering  # noqa: E402
from db import queries  # noqa: E402
from db.records import TERMINAL  # noqa: E402
from db.store import RunStore  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip
TRAIN_CONFIG = {
    "data": {"name": "digits", "batch_size": 20, "samples_per_class": 4},
    "model": {"name": "mlp", "embedding_dim": 16},
    "objective": {"kind": "loss", "name": "triplet"},
    "regularizer": {"name": "sec", "weight": 0.1},
    # long enough to outlast the bench: a run ending (or the next one starting, with
    # its torch import) inside a window would count against that window
    "training": {"steps": 1_000_000, "device": "cpu"},
    "diagnostics": {"eval_every": 1_000_000, "eval_max_samples": 300},
}
STORED_STEPS = 300
SCALAR_NAMES = [
    "loss/total", "loss/metric", "loss/sec", "norm/mean", "norm/var", "norm/std", "norm/cv",
    "norm/min", "norm/max", "norm/p05", "norm/p50", "norm/p95", "cos/pos", "cos/neg",
    "cos/gap", "grad/norm_mean", "grad/rotation_ratio", "lr", "time/step",
    "time/samples_per_s",
]  # fmt: skip
TARGETS = {"first_content_s": 1.5, "cpu_per_tab": 0.10, "speed_ratio": 0.80, "lag_p90_s": 2.0}


# ----------------------------------------------------------------------------- setup


def fill(store: RunStore, count: int) -> list[str]:
    """``count`` finished runs with per-step scalars, norm histograms, evaluations and a
    snapshot (what the pages read)."""
    rng = np.random.default_rng(0)
    run_ids = []
    for index in range(count):
        config = {**TRAIN_CONFIG, "training": {"steps": STORED_STEPS, "seed": index % 3}}
        run_id = store.create_run(config, f"stored-{index:02d}", sweep_id=f"sweep-{index // 10}")
        store.set_status(run_id, "running", device="cpu")
        with store.tracker(run_id, flush_interval=60) as tracker:
            for step in range(1, STORED_STEPS + 1):
                values = {name: float(rng.random()) + 0.01 for name in SCALAR_NAMES}
                values["norm_hist/048"], values["norm_hist/049"] = 0.6, 0.4
                tracker.track_many(values, step)
                tracker.track_sample_norms([0, 1, 2], list(rng.random(3) + 1), step)
            tracker.track_eval(
                {"recall@1": 0.5, "nmi": 0.4, "f1": 0.3, "map@r": 0.2, "norm/var": 0.01},
                STORED_STEPS,
            )
            points = rng.normal(size=(300, 16)).astype(np.float32)
            tracker.track_snapshot(points, np.arange(300) % 10, STORED_STEPS)
            tracker.track_progress(STORED_STEPS, STORED_STEPS)
        store.set_status(run_id, "finished")
        run_ids.append(run_id)
    return run_ids


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_stack(home: Path, port: int, concurrency: int, log: Path) -> subprocess.Popen:
    env = {**os.environ, "SPHERESCOPE_HOME": str(home), "PYTHONUNBUFFERED": "1"}
    env.pop("REDIS_URL", None)  # the stack starts its own private Redis
    script = Path(sys.executable).parent / "spherescope"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "worker.cli"]
    return subprocess.Popen(
        [*command, "up", "--port", str(port), "--concurrency", str(concurrency)],
        cwd=REPO,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def start_floor(port: int, log: Path) -> subprocess.Popen:
    """``streamlit run bench/floor_page.py``: the bare page every page is compared with."""
    argv = [sys.executable, "-m", "streamlit", "run", str(REPO / "bench" / "floor_page.py")]
    argv += ["--server.port", str(port), "--server.headless", "true"]
    argv += ["--browser.gatherUsageStats", "false"]
    with log.open("w") as out:
        return subprocess.Popen(
            argv, cwd=REPO, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def wait_healthy(base: str, process: subprocess.Popen, timeout_s: float = 180) -> None:
    problem = wait_until_answering(base, process, timeout_s)
    if problem:
        raise SystemExit(f"the dashboard at {base} {problem}")


def streamlit_process(stack: subprocess.Popen) -> psutil.Process:
    for child in psutil.Process(stack.pid).children(recursive=True):
        if "streamlit" in " ".join(child.cmdline()):
            return child
    raise SystemExit("no Streamlit process under spherescope up")


def stop_stack(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the session this script started
        process.wait(timeout=10)


# ----------------------------------------------------------------------------- measures


#: What counts as a page's first meaningful content, and its drawn form for the
#: in-page clock (a chart counts once Vega has drawn it: a canvas or svg inside).
CHART = '[data-testid="stVegaLiteChart"]'
LIVE_CHART = ".spherescope-live-chart"  # the Run page's charts (app.panels.live_charts)
DRAWN_CHART = f"{CHART} canvas, {CHART} svg"
DRAWN_LIVE_CHART = f"{LIVE_CHART} canvas"
RUNS_GRID = '[data-testid="stMain"] [data-testid="stDataFrame"]'
ANY_CONTENT = (
    '[data-testid="stMain"] [data-testid="stDataFrame"], '
    '[data-testid="stMain"] [data-testid="stAlert"], '
    f"{DRAWN_CHART}"
)
FIRST_CONTENT = {
    # the first screenful is a plain table (app.panels.runs_preview), then the grid
    "runs": (".spherescope-runs-preview", ".spherescope-runs-preview"),
    "runs grid": (RUNS_GRID, RUNS_GRID),  # the same page's data grid, which follows
    "run": (LIVE_CHART, DRAWN_LIVE_CHART),
    # its metric charts are the Run page's chart element (linked zoom)
    "compare": (f"{CHART}, {LIVE_CHART}", f"{DRAWN_CHART}, {DRAWN_LIVE_CHART}"),
    "geometry": (CHART, DRAWN_CHART),
    "launch": ('[data-testid="stTabs"]', '[data-testid="stTabs"]'),  # its form's tabs
    # a table, a chart or the page's notice of what it needs (the bench's store has no
    # reproduction runs and no per-query results): whichever the page draws first
    "explorer": (ANY_CONTENT, ANY_CONTENT),
    "report": (ANY_CONTENT, ANY_CONTENT),
}
#: The floor (``bench/floor_page.py``): a bare Streamlit page with a 20-row table, as
#: the grid component and as a markdown table, served and loaded like the pages.
FLOOR_CONTENT = {
    "grid": ('[data-testid="stDataFrame"]', '[data-testid="stDataFrame"]'),
    "markdown": ('[data-testid="stMarkdown"] table', '[data-testid="stMarkdown"] table'),
}
#: Installed in every document before its scripts: records (performance.now(), i.e.
#: milliseconds since that navigation started) when the browser is next free to show a
#: frame after each drawn selector first matches (a frame, then a task: while the page
#: is still busy, e.g. embedding further charts, nothing new is on screen).
FIRST_SEEN_JS = """(() => {
  const wanted = %s;
  const matched = new Set();
  window.__firstSeen = {};
  const check = () => {
    for (const selector of wanted) {
      if (!matched.has(selector) && document.querySelector(selector)) {
        matched.add(selector);
        requestAnimationFrame(() => setTimeout(() => {
          window.__firstSeen[selector] = performance.now();
        }));
      }
    }
  };
  new MutationObserver(check).observe(document, {subtree: true, childList: true});
})();"""


def first_content(
    page, base: str, run_id: str, pair: str, repeats: int, names: list[str] | None = None
) -> dict[str, tuple[float, float, float, float]]:
    """Per page (reloaded fresh each time; Streamlit's session starts with the
    navigation): seconds from navigation to its first chart or table as Playwright
    observes it (``wait_for`` polls, up to 0.5 s apart, and only when the page's main
    thread is free), and as the page itself records it shown (``FIRST_SEEN_JS``); the
    median of ``repeats`` loads (the pages in turn, so each server cache is cold on
    the first load of a page and warm on the later ones), and the slowest load of each."""
    paths = {
        "runs": "/",
        "runs grid": "/",
        "run": f"/run?run_id={run_id}",
        "compare": f"/compare?runs={pair}",
        "geometry": f"/geometry?run_id={run_id}",
        "launch": "/launch",
        "explorer": f"/explorer?run_id={run_id}",
        "report": "/report",
    }
    chosen = {n: p for n, p in paths.items() if names is None or n in names}
    return _loads(page, {n: (base + p, FIRST_CONTENT[n]) for n, p in chosen.items()}, repeats)


def floor_content(page, floor_base: str, repeats: int) -> dict[str, tuple]:
    """``first_content``'s figures for the bare floor page, grid and markdown."""
    pages = {n: (f"{floor_base}/?table={n}", FLOOR_CONTENT[n]) for n in FLOOR_CONTENT}
    return _loads(page, pages, repeats)


def _loads(
    page, pages: dict[str, tuple[str, tuple[str, str]]], repeats: int
) -> dict[str, tuple[float, float, float, float]]:
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in pages}
    for _ in range(repeats):
        for name, (url, selectors) in pages.items():
            times[name].append(_first_content(page, url, *selectors))
    return {
        name: (
            statistics.median(observed for observed, _ in pairs),
            statistics.median(shown for _, shown in pairs),
            max(shown for _, shown in pairs),
            max(observed for observed, _ in pairs),
        )
        for name, pairs in times.items()
    }


def _first_content(page, url: str, selector: str, drawn: str) -> tuple[float, float]:
    """One load of ``url``: (seconds observed by Playwright, seconds shown in-page)."""
    started = time.perf_counter()
    page.goto(url)
    try:
        page.locator(selector).first.wait_for(timeout=30_000)
        observed = time.perf_counter() - started
        page.wait_for_function(
            "s => window.__firstSeen && s in window.__firstSeen", arg=drawn, timeout=30_000
        )
        painted = page.evaluate("s => window.__firstSeen[s]", drawn) / 1000
        return observed, painted
    except Exception as error:  # one page's failure must not lose the other figures
        print(f"{url}: no content within 30 s ({type(error).__name__})")
        return float("nan"), float("nan")


@dataclass
class Window:
    """One measuring window: steps and seconds of the watched run, the server's CPU
    seconds, and the cores used per process group."""

    steps: float
    seconds: float
    server_seconds: float
    groups: dict[str, float]

    @property
    def speed(self) -> float:
        return self.steps / self.seconds if self.seconds else float("nan")

    @property
    def server_cpu(self) -> float:
        return self.server_seconds / self.seconds if self.seconds else float("nan")

    @staticmethod
    def total(windows: list[Window]) -> Window:
        """The windows as one (groups: weighted by each window's length)."""
        seconds = sum(w.seconds for w in windows)
        groups: dict[str, float] = {}
        for window in windows:
            for name, cores in window.groups.items():
                groups[name] = groups.get(name, 0.0) + cores * window.seconds / seconds
        steps = sum(w.steps for w in windows)
        return Window(steps, seconds, sum(w.server_seconds for w in windows), groups)


def _window(
    store: RunStore, run_id: str, server: psutil.Process, by_group, seconds: float
) -> Window:
    """``seconds`` of the run training as it is: its steps (the store's progress), the
    server's CPU and the cores used per process group."""
    cpu_before = cpu_seconds(server)
    by_group.start()
    first_step, started = store.get_run(run_id).progress_step or 0, time.monotonic()
    time.sleep(seconds)
    steps = (store.get_run(run_id).progress_step or 0) - first_step
    elapsed = time.monotonic() - started
    groups = by_group.stop()
    return Window(steps, elapsed, cpu_seconds(server) - cpu_before, groups)


def cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


def wait_quiet(process: psutil.Process, limit: float = 0.05, timeout_s: float = 30.0) -> None:
    """Wait until ``process`` uses under ``limit`` of a core over a second (at most
    ``timeout_s``): the pages opened for first content can still be finishing their
    script runs, which the unwatched window would otherwise count as idle CPU."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        before = cpu_seconds(process)
        time.sleep(1.0)
        if cpu_seconds(process) - before < limit:
            return


def process_group(process: psutil.Process, stack_pid: int) -> str:
    """Which part of the system a process is: server, worker, redis, chromium, bench."""
    try:
        command = " ".join(process.cmdline())
        parents = {parent.pid for parent in process.parents()}
    except psutil.Error:
        return "gone"
    if "streamlit" in command:
        return "server"
    if "redis-server" in command:
        return "redis"
    if stack_pid in parents or process.pid == stack_pid:
        return "worker"  # spherescope up, the Celery worker and its training children
    if "chrom" in command or "headless_shell" in command:
        return "chromium"
    return "bench"  # this script and Playwright's driver


class CpuByGroup:
    """CPU seconds (user + system) per process group between ``start()`` and ``stop()``,
    counting processes that appear in between from zero, and the whole machine's."""

    def __init__(self, stack_pid: int) -> None:
        self.stack_pid = stack_pid
        self.started: dict[int, float] = {}

    def _processes(self) -> list[psutil.Process]:
        own = psutil.Process(os.getpid())
        stack = psutil.Process(self.stack_pid)
        found = [own, *own.children(recursive=True), stack, *stack.children(recursive=True)]
        return list({p.pid: p for p in found}.values())

    def _snapshot(self) -> dict[int, tuple[str, float]]:
        result = {}
        for process in self._processes():
            try:
                result[process.pid] = (process_group(process, self.stack_pid), cpu_seconds(process))
            except psutil.Error:
                continue
        return result

    def start(self) -> None:
        self.started = {pid: seconds for pid, (_, seconds) in self._snapshot().items()}
        self.machine_started = sum(psutil.cpu_times()[:3])  # user, nice, system
        self.at = time.monotonic()

    def stop(self) -> dict[str, float]:
        """Cores used on average per group (and "machine": every process on it)."""
        elapsed = time.monotonic() - self.at
        groups: dict[str, float] = {}
        for pid, (group, seconds) in self._snapshot().items():
            used = seconds - self.started.get(pid, 0.0)
            groups[group] = groups.get(group, 0.0) + used / elapsed
        groups["machine"] = (sum(psutil.cpu_times()[:3]) - self.machine_started) / elapsed
        return groups


def show_groups(label: str, groups: dict[str, float]) -> str:
    order = ["server", "chromium", "worker", "redis", "bench", "machine"]
    parts = [f"{name} {groups[name]:.0%}" for name in order if name in groups]
    return f"  {label}: " + ", ".join(parts)


#: Installed in every document: records (epoch seconds, step) in ``window.__drawnSteps``
#: at the frame after the Run page's "up to step N" caption (set once the charts show
#: step N) changes. Read once per watching window: sampling every tab every 0.25 s
#: from here cost the machine, and so the training measured, ~2 % of a core.
DRAWN_STEPS_JS = """(() => {
  window.__drawnSteps = [];
  let last = null;
  const read = () => {
    const caption = document.querySelector('.spherescope-live-caption');
    const found = caption && /up to step ([\\d,]+)/.exec(caption.textContent);
    if (!found) return;
    const step = Number(found[1].replace(/,/g, ''));
    if (step === last) return;
    last = step;
    requestAnimationFrame(() => window.__drawnSteps.push([Date.now() / 1000, step]));
  };
  new MutationObserver(read).observe(document,
    {subtree: true, childList: true, characterData: true});
})();"""


def drawn_samples(
    changes: list[tuple[float, int]], start: float, end: float, every: float = 0.25
) -> list[tuple[float, int]]:
    """(time, newest step drawn by then) every ``every`` seconds of [start, end) from a
    tab's recorded changes (none before its first drawing)."""
    changes = sorted(changes)
    samples = []
    for at in np.arange(start, end, every):
        drawn = [step for seen, step in changes if seen <= at]
        if drawn:
            samples.append((float(at), drawn[-1]))
    return samples


def lags(store: RunStore, run_id: str, samples: list[tuple[float, int]]) -> list[float]:
    """Per sample (wall time, drawn step): how long the oldest undrawn step had been
    logged (0 when everything logged was drawn)."""
    series = queries.metric_series(store, [run_id], ["loss/total"], since_step=0)
    steps = series["step"].to_numpy()
    walls = series["wall_time"].to_numpy()
    result = []
    for at, drawn in samples:
        waiting = walls[(steps > drawn) & (walls <= at)]
        result.append(float(at - waiting.min()) if waiting.size else 0.0)
    return result


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


# ----------------------------------------------------------------------------- main


def _report_first_content(
    loads: dict[str, tuple[float, float, float, float]],
    floor: dict[str, tuple[float, float, float, float]],
    args: argparse.Namespace,
) -> int:
    load = os.getloadavg()
    print(f"\nload average (1/5/15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
          f"on {os.cpu_count()} cores; {args.stored} stored runs, {args.training} launched "
          f"(worker concurrency {args.concurrency}), {args.tabs} tabs")  # fmt: skip
    hows = (
        "observed by Playwright",
        "shown, in-page clock",
        "shown, slowest load",
        "observed, slowest load",
    )
    print(f"first meaningful content over {args.repeats} loads per page (median unless said):")
    for index, how in enumerate(hows):
        figures = {name: pair[index] for name, pair in loads.items()}
        shown = ", ".join(f"{k} {v:.2f}" for k, v in figures.items())
        worst = max(figures.values())
        print(f"  {how} (s): {shown}; worst {worst:.2f} "
              f"(target ≤ {TARGETS['first_content_s']})")  # fmt: skip
    # the floor, loaded in the same browser in the same run: what any Streamlit page costs
    grid, markdown = floor["grid"][1], floor["markdown"][1]
    print(f"floor, a bare Streamlit page with a 20-row table (shown, in-page clock): "
          f"st.dataframe {grid:.2f} s, markdown table {markdown:.2f} s")  # fmt: skip
    print("  page / floor (shown, in-page clock): " + ", ".join(
        f"{name} {pair[1] / grid:.2f}× grid, {pair[1] / markdown:.2f}× markdown"
        for name, pair in loads.items()
    ))  # fmt: skip
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stored", type=int, default=50, help="finished runs in the store")
    parser.add_argument("--training", type=int, default=4, help="runs launched to train")
    parser.add_argument("--concurrency", type=int, default=2, help="parallel runs of the worker")
    parser.add_argument("--tabs", type=int, default=2, help="tabs watching the live Run page")
    parser.add_argument("--window", type=float, default=20.0, help="seconds per window")
    parser.add_argument(
        "--rounds", type=int, default=3, help="rounds of an unwatched then a watched window"
    )
    parser.add_argument("--repeats", type=int, default=3, help="loads of each page (median)")
    parser.add_argument(
        "--first-content-only", action="store_true", help="step 1 only (no watching windows)"
    )
    parser.add_argument(
        "--pages",
        default=",".join(FIRST_CONTENT),
        help="with --first-content-only: the pages timed (comma-separated, e.g. run,compare)",
    )
    args = parser.parse_args()
    pages = [name.strip() for name in args.pages.split(",") if name.strip()]
    if unknown := sorted(set(pages) - set(FIRST_CONTENT)):
        parser.error(f"unknown pages {unknown}; known: {', '.join(FIRST_CONTENT)}")
    if not args.first_content_only and (args.training < 1 or args.tabs < 1):
        parser.error("the watching windows need --training and --tabs ≥ 1")
    from playwright.sync_api import sync_playwright

    from worker.submit import cancel, launch

    home = Path(tempfile.mkdtemp(prefix="dashboard-speed-")) / "home"
    store = RunStore(home)
    started = time.perf_counter()
    stored = fill(store, args.stored)
    print(f"filled {len(stored)} runs in {time.perf_counter() - started:.0f} s")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    stack = start_stack(home, port, args.concurrency, home.parent / "stack.log")
    floor_port = free_port()
    floor_base = f"http://127.0.0.1:{floor_port}"
    floor_server = start_floor(floor_port, home.parent / "floor.log")
    trained: list[str] = []
    unwatched: list[Window] = []
    watching: list[Window] = []
    try:
        wait_healthy(base, stack)
        wait_healthy(floor_base, floor_server)
        os.environ["REDIS_URL"] = (home / "stack" / "redis-url").read_text().strip()
        server = streamlit_process(stack)
        by_group = CpuByGroup(stack.pid)
        trained = [launch(TRAIN_CONFIG, f"training-{i}", store=store) for i in range(args.training)]
        # tab i watches run i: with 4 runs training and 2 tabs, two live Run pages while
        # four runs log (the speed ratio is the first watched run's)
        # with --first-content-only --training 0: nothing trains (a quiet machine)
        watched_runs = [trained[i % len(trained)] for i in range(args.tabs)] if trained else []
        watched = watched_runs[0] if watched_runs else ""
        deadline = time.monotonic() + 300
        for run_id in dict.fromkeys(watched_runs):  # torch imported, training
            while (store.get_run(run_id).progress_step or 0) < 50:
                if time.monotonic() > deadline:
                    raise SystemExit(f"run {run_id} did not start training within 300 s")
                time.sleep(1)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": 1400, "height": 900})
            contents = [*FIRST_CONTENT.values(), *FLOOR_CONTENT.values()]
            drawn = sorted({drawn for _, drawn in contents})
            context.add_init_script(FIRST_SEEN_JS % json.dumps(drawn))
            context.add_init_script(DRAWN_STEPS_JS)
            page = context.new_page()
            page.goto(base + "/")  # warm: the first script run imports the app
            page.locator('[data-testid="stDataFrame"]').first.wait_for(timeout=120_000)
            pair = f"{stored[0]},{stored[1]}"
            loads = first_content(page, base, stored[0], pair, args.repeats, pages)
            page.goto(floor_base + "/")  # warm: the floor server's first script run
            page.locator('[data-testid="stDataFrame"]').first.wait_for(timeout=120_000)
            floor = floor_content(page, floor_base, args.repeats)
            if args.first_content_only:
                browser.close()
                return _report_first_content(loads, floor, args)  # stacks stop in finally
            tabs = [page, *[context.new_page() for _ in range(args.tabs - 1)]]
            samples: dict[str, list[tuple[float, int]]] = {r: [] for r in watched_runs}
            for _ in range(args.rounds):  # unwatched, watched, unwatched, watched, ...
                for tab in tabs:
                    tab.goto("about:blank")  # nobody watches now
                wait_quiet(server)
                unwatched.append(_window(store, watched, server, by_group, args.window))
                for tab, run_id in zip(tabs, watched_runs, strict=True):
                    tab.goto(f"{base}/run?run_id={run_id}")
                    tab.get_by_text(re.compile(r"up to step")).first.wait_for(timeout=180_000)
                time.sleep(3)
                started = time.time()
                watching.append(_window(store, watched, server, by_group, args.window))
                for tab, run_id in zip(tabs, watched_runs, strict=True):
                    changes = tab.evaluate("window.__drawnSteps")
                    samples[run_id].extend(drawn_samples(changes, started, time.time()))
            browser.close()
        # (queued runs waiting for a free pool process are not ended)
        ended = [r for r in trained if store.get_run(r).status in TERMINAL]
        if ended:
            print(f"warning: {len(ended)} training run(s) ended during the windows")
        time.sleep(2)  # the last flush of the watched run reaches the store
        lag = [value for run_id, taken in samples.items() for value in lags(store, run_id, taken)]
    finally:
        for run_id in trained:
            try:
                cancel(run_id, store=store)
            except Exception as error:  # stopping the stack ends them anyway
                print(f"cancel {run_id}: {error}")
        stop_stack(stack)
        stop_stack(floor_server)
    _report_first_content(loads, floor, args)
    idle, busy = Window.total(unwatched), Window.total(watching)
    per_tab = max(busy.server_cpu - idle.server_cpu, 0.0) / args.tabs
    ratio = busy.speed / idle.speed if idle.speed else float("nan")
    rounds = ", ".join(
        f"{w.speed / u.speed:.2f} ({u.speed:.0f} → {w.speed:.0f} steps/s, server "
        f"{u.server_cpu:.0%} → {w.server_cpu:.0%})"
        for u, w in zip(unwatched, watching, strict=True)
    )
    print(f"training speed over {args.rounds} rounds of {args.window:.0f} s unwatched then "
          f"{args.window:.0f} s watched: unwatched {idle.speed:.2f} steps/s, watched "
          f"{busy.speed:.2f} steps/s, ratio {ratio:.2f} (target ≥ {TARGETS['speed_ratio']}); "
          f"per round {rounds}")  # fmt: skip
    print(f"server CPU: {idle.server_cpu:.1%} of a core unwatched, {busy.server_cpu:.1%} "
          f"watched; {per_tab:.1%} per tab (target ≤ {TARGETS['cpu_per_tab']:.0%})")  # fmt: skip
    print("CPU by process group (cores; machine = every process on it, other work included):")
    print(show_groups("unwatched", idle.groups))
    print(show_groups("watched  ", busy.groups))
    median = statistics.median(lag or [0])
    print(f"lag logged → drawn, {args.tabs} tabs each on its own run's live page while "
          f"{args.training} runs train, over {len(lag)} samples: median {median:.2f} s, "
          f"p90 {percentile(lag, 90):.2f} s, max {max(lag or [0]):.2f} s "
          f"(target p90 ≤ {TARGETS['lag_p90_s']})")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
