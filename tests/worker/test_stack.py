"""``spherescope up``: starts Redis, a worker and the app; Ctrl-C stops exactly those."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
import redis
from worker_fixtures import REPO, wait_for

from worker.redis_server import free_port


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


def health(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def test_up_starts_everything_and_ctrl_c_stops_everything_it_started(tmp_path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env.update(SPHERESCOPE_HOME=str(tmp_path / "home"), OMP_NUM_THREADS="1", PYTHONPATH=str(REPO))
    log = tmp_path / "up.log"
    with log.open("wb") as out:
        up = subprocess.Popen(
            [sys.executable, "-m", "worker.cli", "up", "--port", str(port)],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for(lambda: "Ctrl-C stops everything" in log.read_text(), 120, "up to start")
        text = log.read_text()
        assert f"dashboard on http://127.0.0.1:{port}" in text
        redis_url = re.search(r"private Redis on (redis://127\.0\.0\.1:\d+/0)", text).group(1)
        wait_for(lambda: health(port), 120, "the dashboard's health endpoint")
        broker = redis.Redis.from_url(redis_url)
        assert broker.ping()
        wait_for(lambda: "ready." in log.read_text(), 120, "the worker to be ready")
        started = descendants(up.pid)
        assert len(started) >= 4  # redis-server, celery main + pool child, streamlit

        up.send_signal(signal.SIGINT)
        assert up.wait(60) == 0
        assert "spherescope: stopped" in log.read_text()
        still = {pid for pid in started if alive(pid)}
        assert still == set(), f"left running: {still}"
        assert not health(port)
        with pytest.raises(redis.ConnectionError):
            broker.ping()
    finally:
        if up.poll() is None:
            up.kill()
            up.wait()
