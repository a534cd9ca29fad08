"""The token gate in a real Streamlit server bound to 0.0.0.0, seen by headless Chromium."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
TOKEN = "s3cret-token"


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def exposed_app(tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing (install the chromium package to run e2e tests)")
    port = _free_port()
    env = {**os.environ, "SPHERESCOPE_HOME": str(tmp_path / "home"), "SPHERESCOPE_TOKEN": TOKEN}
    argv = [sys.executable, "-m", "streamlit", "run", str(REPO / "app" / "main.py")]
    argv += ["--server.address", "0.0.0.0", "--server.port", str(port)]
    argv += ["--server.headless", "true", "--browser.gatherUsageStats", "false"]
    process = subprocess.Popen(
        argv,
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
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
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(30)


def test_a_browser_sees_nothing_until_it_gives_the_token(exposed_app) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        page = browser.new_page()
        page.goto(exposed_app + "/launch")
        page.get_by_label("Access token").wait_for(timeout=60_000)
        body = page.inner_text("body")
        assert "Launch" not in body and "Runs" not in body  # no navigation, no page

        page.get_by_label("Access token").fill("wrong")
        page.get_by_label("Access token").press("Enter")
        page.get_by_text("Wrong token.").wait_for(timeout=30_000)

        page.get_by_label("Access token").fill(TOKEN)
        page.get_by_label("Access token").press("Enter")
        page.get_by_text("No runs yet").wait_for(timeout=60_000)

        other = browser.new_page()  # a new session: the URL token works as well
        other.goto(exposed_app + f"/?token={TOKEN}")
        other.get_by_text("No runs yet").wait_for(timeout=60_000)
        browser.close()
