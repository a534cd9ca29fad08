"""``spherescope up`` and ``spherescope worker``: start processes, wait, stop them.

``up`` starts (1) a private Redis unless ``REDIS_URL`` is set, (2) the workers the
hardware allows (see ``processes.plan_workers``), (3) the Streamlit app bound to
``--host`` (default 127.0.0.1). Ctrl-C or SIGTERM stops exactly what it started.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from db.layout import resolve_home
from worker import processes
from worker.redis_server import PrivateRedis

APP_MAIN = Path(__file__).resolve().parent.parent / "app" / "main.py"
POLL_S = 0.5


class Stop(Exception):
    """Raised by the SIGTERM handler to leave the wait loop."""


def _raise_stop(signum: int, frame: FrameType | None) -> None:
    raise Stop(signal.Signals(signum).name)


def app_argv(host: str, port: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(APP_MAIN),
        "--server.address",
        host,
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
    ]


def wait_for_children(children: Sequence[processes.ChildProcess]) -> int:
    """Block until a signal arrives (0) or a child exits on its own (1)."""
    previous = signal.signal(signal.SIGTERM, _raise_stop)
    try:
        while True:
            for child in children:
                code = child.poll()
                if code is not None:
                    print(
                        f"spherescope: {child.label} exited with code {code}; stopping",
                        file=sys.stderr,
                    )
                    return 1
            time.sleep(POLL_S)
    except (KeyboardInterrupt, Stop):
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous)


def start_workers(
    redis_url: str, home: str, concurrency: int, gpus: int | None = None
) -> list[processes.ChildProcess]:
    gpus = processes.count_gpus() if gpus is None else gpus
    children = []
    for spec in processes.plan_workers(gpus, concurrency):
        env = processes.child_env(redis_url, home, spec.env)
        children.append(processes.ChildProcess(f"worker {spec.name}", spec.argv(), env))
    return children


def up(host: str, port: int, concurrency: int, with_app: bool = True) -> int:
    home = str(resolve_home(None))
    redis_server = None
    children: list[processes.ChildProcess] = []
    try:
        redis_url = os.environ.get("REDIS_URL", "")
        if not redis_url:
            redis_server = PrivateRedis().start()
            redis_url = redis_server.url
            print(f"spherescope: private Redis on {redis_url} (nothing persisted)")
        children += start_workers(redis_url, home, concurrency)
        if with_app:
            env = processes.child_env(redis_url, home)
            children.append(processes.ChildProcess("app", app_argv(host, port), env))
            print(f"spherescope: dashboard on http://{host}:{port}")
        print(f"spherescope: run store {home}; Ctrl-C stops everything")
        sys.stdout.flush()
        return wait_for_children(children)
    finally:
        processes.stop_all(children)
        if redis_server is not None:
            redis_server.close()
        print("spherescope: stopped")


def worker(concurrency: int, cpu_only: bool = False) -> int:
    """Extra workers for this machine against the configured REDIS_URL and store."""
    redis_url = os.environ.get("REDIS_URL", "")
    if not redis_url:
        print(
            "spherescope worker: set REDIS_URL to the broker of `spherescope up` "
            "(and SPHERESCOPE_HOME to the shared run store)",
            file=sys.stderr,
        )
        return 2
    children = start_workers(
        redis_url, str(resolve_home(None)), concurrency, gpus=0 if cpu_only else None
    )
    try:
        return wait_for_children(children)
    finally:
        processes.stop_all(children)
