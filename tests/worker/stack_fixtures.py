"""Helpers of the stack tests: a real ``spherescope up`` subprocess and its processes."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from kombu import pools
from worker_fixtures import REPO, wait_for

from app.health import answers
from worker.celery_app import app
from worker.settings import stack_url_file


def descendants(pid: int) -> set[int]:
    """Every living process below ``pid`` (by parent links in /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(") ", 1)[1].split()
            except (FileNotFoundError, ProcessLookupError, IndexError):
                continue
            if fields[0] != "Z":
                parents[int(entry.name)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier}
        found |= frontier
    return found


def alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(") ", 1)[1][0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def command_line(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except (FileNotFoundError, ProcessLookupError):
        return ""


def health(port: int) -> bool:
    return answers(f"http://127.0.0.1:{port}")


class Stack:
    """``spherescope up ARGS`` with a private store, logging to a file."""

    def __init__(self, tmp: Path, *args: str, **env: str) -> None:
        self.home = tmp / "home"
        self.log = tmp / "up.log"
        hidden = ("REDIS_URL", "SPHERESCOPE_TOKEN")
        full_env = {k: v for k, v in os.environ.items() if k not in hidden}
        full_env.update(
            SPHERESCOPE_HOME=str(self.home), OMP_NUM_THREADS="1", PYTHONPATH=str(REPO), **env
        )
        self.env = full_env
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "worker.cli", "up", *args],
                cwd=REPO,
                env=full_env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_ready(self, timeout_s: float = 180.0) -> Stack:
        wait_for(lambda: "Ctrl-C stops everything" in self.text(), timeout_s, "up to start")
        wait_for(lambda: " ready." in self.text(), timeout_s, "the worker to be ready")
        return self

    @property
    def url_file(self) -> Path:
        return stack_url_file(self.home)

    @property
    def redis_url(self) -> str:
        return self.url_file.read_text().strip()

    def redis_pid(self) -> int:
        (pid,) = [p for p in descendants(self.process.pid) if "redis-server" in command_line(p)]
        return pid

    def signal(self, signum: int = signal.SIGTERM) -> None:
        self.process.send_signal(signum)

    def close(self) -> None:
        if self.process.poll() is None:
            for pid in descendants(self.process.pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            self.process.kill()
            self.process.wait()


def _switch_broker(url: str | None) -> None:
    """``app`` launches into ``url`` from now on. Its connection pool is kombu's global
    one for its URL, which a closed pool would stay registered as: switching back to that
    URL then failed every launch ("Acquire on closed pool"), so every global pool is
    closed and forgotten (``pools.reset``), with the app's references to them."""
    app.conf.broker_url = url
    pools.reset()
    app._pool = None
    app.amqp._producer_pool = None


@contextlib.contextmanager
def use_broker(url: str) -> Iterator[None]:
    """This process launches into ``url`` for a while, then back to its previous broker."""
    previous = app.conf.broker_url
    _switch_broker(url)
    try:
        yield
    finally:
        _switch_broker(previous)
