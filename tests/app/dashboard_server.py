"""Real dashboard processes for the browser tests (a bare Streamlit server, or the whole
stack `spherescope up` starts), and the Chromium they use."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from app.health import wait_until_answering

if TYPE_CHECKING:
    from playwright.sync_api import Browser

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip
STARTUP_S = 120  # Redis, a Celery worker and Streamlit on a busy machine


def require_chromium() -> None:
    if Path(CHROMIUM).exists():
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(
            f"{CHROMIUM} is missing; CI must run the browser tests (apt-get install -y chromium)"
        )
    pytest.skip(f"{CHROMIUM} is missing (install the chromium package to run e2e tests)")


class SharedChromium:
    """One Playwright driver and one headless Chromium for all the browser tests of a
    pytest process (an xdist worker); each test lends it (``lend``) and opens its pages
    in browser contexts of its own, closed after it.

    Between its calls Playwright's sync API marks its event loop as the thread's running
    loop (``wait_for_future`` in playwright/_impl/_greenlets.py). Kept for a whole
    session, that mark would make ``asyncio.run`` fail in every later test of the
    process and a test's own ``sync_playwright()`` refuse to start; so it is set only
    while a test holds the browser."""

    def __init__(self, browser: Browser, loop: asyncio.AbstractEventLoop) -> None:
        self._browser = browser
        self._loop = loop

    @contextmanager
    def lend(self) -> Iterator[Browser]:
        """The browser, for one test; closes every context (and page) it opened."""
        asyncio._set_running_loop(self._loop)  # as the sync API left it after its last call
        try:
            yield self._browser
        finally:
            try:
                for context in self._browser.contexts:
                    context.close()
            finally:
                asyncio._set_running_loop(None)


@contextmanager
def shared_chromium() -> Iterator[SharedChromium]:
    """Playwright and Chromium started once; both stopped on leaving."""
    from playwright.sync_api import sync_playwright

    require_chromium()
    playwright = sync_playwright().start()
    loop = asyncio.get_running_loop()  # the sync API's, marked running between calls
    try:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        asyncio._set_running_loop(None)
        yield SharedChromium(browser, loop)
    finally:
        asyncio._set_running_loop(loop)
        playwright.stop()  # closes the browser too


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
        _wait_until_healthy(process, base, "streamlit")
        yield base
    finally:
        os.killpg(process.pid, signal.SIGTERM)  # the session this helper started
        process.wait(30)


def _wait_until_healthy(process: subprocess.Popen, base: str, what: str) -> None:
    """Until the dashboard at ``base`` answers its health check; fails the test if
    ``process`` (``what``) exits first or STARTUP_S passes."""
    problem = wait_until_answering(base, process, STARTUP_S)
    if problem:
        pytest.fail(f"{what} {problem}")


def _spherescope() -> list[str]:
    script = Path(sys.executable).parent / "spherescope"
    if script.exists():
        return [str(script)]
    found = shutil.which("spherescope")
    if found:
        return [found]
    return [sys.executable, "-c", "import sys; from worker.cli import main; sys.exit(main())"]


@contextmanager
def spherescope_up(home: Path, log_name: str) -> Iterator[str]:
    """`spherescope up` on a free port with the store ``home``; yields the base URL once
    the dashboard answers, and stops the stack after. Its output goes to
    test-artifacts/``log_name``."""
    require_chromium()
    ARTIFACTS.mkdir(exist_ok=True)
    port = free_port()
    env = {**os.environ, "SPHERESCOPE_HOME": str(home), "PYTHONUNBUFFERED": "1"}
    env.pop("REDIS_URL", None)  # the stack starts its own private Redis
    # The tests' hand-made "running" runs heartbeat when they log: on a loaded machine
    # a page load outlasts the default 15 s and the reaper marked them lost mid-test.
    env["SPHERESCOPE_LOST_AFTER_S"] = "600"
    # Started outside the repository, as a user does: the repo's .streamlit/config.toml
    # is not read there, so what the dashboard needs must come from the command line.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    outside = home.parent / "cwd"
    outside.mkdir(parents=True, exist_ok=True)
    log = (ARTIFACTS / log_name).open("w")
    process = subprocess.Popen(
        [*_spherescope(), "up", "--port", str(port)],
        cwd=outside,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_healthy(process, base, f"spherescope up (see {ARTIFACTS / log_name})")
        yield base
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # our own session: the stack we started
            process.wait(timeout=10)
        log.close()
