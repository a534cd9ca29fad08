"""Steps/s a writer records through the ingest service vs straight into a store folder.

One process logs ``--steps`` steps of ``--scalars`` scalars each (the per-step
diagnostics of a training run are ~40) through a run's tracker, inside its lifecycle,
then ends the run; timed from the first step to the end recorded in the store (for
the remote side: everything acknowledged by the service, ``SPHERESCOPE_URL``, its
server a separate ``python -m worker.ingest`` process on loopback); the logging loop's
rate alone is what a training loop pays (the rest is the server's work, which on a lab
is another machine's CPU, here the same cores). Sides alternate
(ABBA) for ``--rounds``; the ratio is the median remote rate over the median local one.
Both stores are fresh temp folders.

    PYTHONPATH=. .venv/bin/python bench/ingest_speed.py --steps 3000 --scalars 40
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from db.lifecycle import RunLifecycle
from db.remote.store import RemoteStore
from db.store import RunStore

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "bench-token"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(home: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "SPHERESCOPE_HOME": str(home), "SPHERESCOPE_TOKEN": TOKEN}
    env["PYTHONPATH"] = str(ROOT)
    process = subprocess.Popen(
        [sys.executable, "-m", "worker.ingest", "--port", str(port)], env=env
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/health", timeout=1).close()
            return process
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("the ingest service did not start")


def one_run(store, steps: int, scalars: int) -> tuple[float, float]:
    """(steps/s of the logging loop, steps/s from the first step to the end recorded)."""
    names = [f"diag/value_{i}" for i in range(scalars)]
    run_id = store.create_run({}, "bench", kind="external", status="running")
    started = time.perf_counter()
    with RunLifecycle(store, run_id, accept_running=True) as run:
        for step in range(1, steps + 1):
            run.tracker.track_many({name: step * 0.001 for name in names}, step)
        logged = time.perf_counter()
    ended = time.perf_counter()
    return steps / (logged - started), steps / (ended - started)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--scalars", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        server = start_server(Path(tmp) / "stack", port)
        try:
            local = RunStore(Path(tmp) / "local")
            remote = RemoteStore(f"http://127.0.0.1:{port}", TOKEN, Path(tmp) / "writer")
            rates: dict[str, list[tuple[float, float]]] = {"local": [], "remote": []}
            for _ in range(args.rounds):
                for side in ("local", "remote", "remote", "local"):
                    store = local if side == "local" else remote
                    rates[side].append(one_run(store, args.steps, args.scalars))
        finally:
            server.terminate()
            server.wait(10)
    medians = {}
    for side, pairs in rates.items():
        medians[side] = [statistics.median(pair[i] for pair in pairs) for i in (0, 1)]
        print(f"{side:>6}: logging loop {medians[side][0]:7.0f} steps/s, "
              f"to the end recorded {medians[side][1]:7.0f} steps/s")  # fmt: skip
    loop = medians["remote"][0] / medians["local"][0]
    whole = medians["remote"][1] / medians["local"][1]
    print(
        f"remote / local: logging loop {loop:.2f}, to the end recorded {whole:.2f} "
        f"({args.steps} steps x {args.scalars} scalars per run; server on this machine)"
    )


if __name__ == "__main__":
    main()
