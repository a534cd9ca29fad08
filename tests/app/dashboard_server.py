"""A real Streamlit dashboard process for the browser tests, and the Chromium they use."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip
STARTUP_S = 120


def require_chromium() -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing (install the chromium package to run e2e tests)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def dashboard(entry: str, env: Mapping[str, str], *options: str) -> Iterator[str]:
    """``streamlit run app/<entry>`` with ``options`` in its own session; yields its
    base URL once ``/_stcore/health`` answers, and stops the whole session after."""
    port = free_port()
    argv = [sys.executable, "-m", "streamlit", "run", str(REPO / "app" / entry)]
    argv += ["--server.port", str(port), "--server.headless", "true", *options]
    process = subprocess.Popen(
        argv,
        cwd=REPO,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_S
        while True:
            try:
                with urllib.request.urlopen(base + "/_stcore/health", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            assert process.poll() is None and time.monotonic() < deadline, "no dashboard"
            time.sleep(0.5)
        yield base
    finally:
        os.killpg(process.pid, signal.SIGTERM)  # the session this helper started
        process.wait(30)
