"""Where a watching tab's time goes: the live Run page profiled in both processes.

Starts the real stack on a private store (``--stored`` finished runs, ``--training``
launched), opens ``--tabs`` tabs on the first training run's live Run page and, over
``--seconds``: samples the Streamlit server with py-spy (if installed) and the first
tab with Chromium's CPU profiler (DevTools protocol), then prints the top self-time
functions of each and the CPU of the server and of Chromium.

    .venv/bin/python bench/profile_live.py [--stored 5 --training 2 --tabs 2 --seconds 20]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.dashboard_speed import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    TRAIN_CONFIG,
    CpuByGroup,
    fill,
    free_port,
    show_groups,
    start_stack,
    stop_stack,
    streamlit_process,
    wait_healthy,
)
from db.store import RunStore  # noqa: E402


def top_self_time(profile: dict, count: int) -> list[tuple[float, str]]:
    """(milliseconds, "function url:line") of the ``count`` nodes with most self time."""
    nodes = {node["id"]: node for node in profile["nodes"]}
    deltas = profile["timeDeltas"]
    spent: collections.Counter[str] = collections.Counter()
    for sample, delta in zip(profile["samples"], deltas, strict=False):
        frame = nodes[sample]["callFrame"]
        url = frame["url"].rsplit("/", 1)[-1]
        spent[f"{frame['functionName'] or '(anon)'} {url}:{frame['lineNumber']}"] += delta
    return [(us / 1000, name) for name, us in spent.most_common(count)]


def by_script(profile: dict) -> list[tuple[float, str]]:
    nodes = {node["id"]: node for node in profile["nodes"]}
    spent: collections.Counter[str] = collections.Counter()
    for sample, delta in zip(profile["samples"], profile["timeDeltas"], strict=False):
        frame = nodes[sample]["callFrame"]
        spent[frame["url"].rsplit("/", 1)[-1] or frame["functionName"]] += delta
    return [(us / 1000, name) for name, us in spent.most_common(15)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stored", type=int, default=5)
    parser.add_argument("--training", type=int, default=2)
    parser.add_argument("--tabs", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from worker.submit import cancel, launch

    home = Path(tempfile.mkdtemp(prefix="profile-live-")) / "home"
    store = RunStore(home)
    fill(store, args.stored)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    stack = start_stack(home, port, 2, home.parent / "stack.log")
    trained: list[str] = []
    try:
        wait_healthy(base, stack)
        os.environ["REDIS_URL"] = (home / "stack" / "redis-url").read_text().strip()
        server = streamlit_process(stack)
        trained = [launch(TRAIN_CONFIG, f"training-{i}", store=store) for i in range(args.training)]
        watched = trained[0]
        while (store.get_run(watched).progress_step or 0) < 50:
            time.sleep(1)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": 1400, "height": 900})
            tabs = [context.new_page() for _ in range(args.tabs)]
            for tab in tabs:
                tab.goto(f"{base}/run?run_id={watched}")
                tab.get_by_text(re.compile(r"up to step")).first.wait_for(timeout=60_000)
            time.sleep(5)
            cdp = context.new_cdp_session(tabs[0])
            cdp.send("Profiler.enable")
            cdp.send("Profiler.setSamplingInterval", {"interval": 500})
            spy = None
            if shutil.which("py-spy") or (Path(sys.executable).parent / "py-spy").exists():
                exe = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
                out = home.parent / "server.txt"
                spy = subprocess.Popen(
                    [exe, "record", "-p", str(server.pid), "-d", str(int(args.seconds)),
                     "-r", "200", "-f", "raw", "-o", str(out), "--nonblocking"],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                )  # fmt: skip
            by_group = CpuByGroup(stack.pid)
            by_group.start()
            cdp.send("Profiler.start")
            time.sleep(args.seconds)
            profile = cdp.send("Profiler.stop")["profile"]
            groups = by_group.stop()
            browser.close()
        print(show_groups(f"{args.tabs} tabs watching", groups))
        total = sum(profile["timeDeltas"]) / 1000
        names = {node["id"]: node["callFrame"]["functionName"] for node in profile["nodes"]}
        idle = sum(
            delta
            for sample, delta in zip(profile["samples"], profile["timeDeltas"], strict=False)
            if names[sample] == "(idle)"
        )
        print(f"tab 1 profile: {total:.0f} ms sampled, idle {idle / 1000:.0f} ms")
        for ms, name in by_script(profile):
            print(f"  {ms:8.1f} ms  {name}")
        print("top self time:")
        for ms, name in top_self_time(profile, args.top):
            print(f"  {ms:8.1f} ms  {name}")
        (home.parent / "tab.cpuprofile").write_text(json.dumps(profile))
        if spy is not None:
            spy.wait(timeout=60)
            stacks: collections.Counter[str] = collections.Counter()
            own: collections.Counter[str] = collections.Counter()
            for line in out.read_text().splitlines():
                stack_text, _, count = line.rpartition(" ")
                frames = stack_text.split(";")
                stacks[frames[-1]] += int(count)
                for frame in set(frames):
                    if "(app/" in frame or "(db/" in frame or "streamlit/" in frame:
                        own[frame] += int(count)
            samples = sum(stacks.values())
            print(f"server: {samples} samples (200/s)")
            for name, count in stacks.most_common(args.top):
                print(f"  {count:6d}  {name[:150]}")
            print("server inclusive (app, db and streamlit frames):")
            for name, count in own.most_common(args.top * 2):
                print(f"  {count:6d}  {name[:150]}")
        print(f"files under {home.parent}")
    finally:
        for run_id in trained:
            try:
                cancel(run_id, store=store)
            except Exception as error:
                print(f"cancel {run_id}: {error}")
        stop_stack(stack)
    return 0


if __name__ == "__main__":
    sys.exit(main())
