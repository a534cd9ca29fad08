"""The README's screenshot of the dashboard: trains a short real run, serves the
dashboard on a free port, and has headless Chromium photograph its Run page.

    .venv/bin/python scripts/dashboard_screenshot.py [--out docs/images/dashboard.png]

Needs Chromium at /usr/bin/chromium (Debian's package) and Playwright's Python
package (the test extras); downloads nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.health import wait_until_answering  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CONFIG = REPO / "examples" / "digits_sec.toml"
STEPS = 600
STARTUP_S = 120


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _train(env: dict[str, str]) -> str:
    """One short SEC run on the bundled digits data; its id."""
    done = subprocess.run(
        [sys.executable, "-m", "worker.cli", "train", str(CONFIG), "--json", "--name",
         "digits · triplet + SEC", "--set", f"training.steps={STEPS}"],
        cwd=REPO, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])["run_id"]


def _serve(env: dict[str, str], port: int) -> subprocess.Popen:
    argv = [sys.executable, "-m", "streamlit", "run", str(REPO / "app" / "main.py"),
            "--server.port", str(port), "--server.headless", "true"]  # fmt: skip
    process = subprocess.Popen(
        argv, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    problem = wait_until_answering(f"http://127.0.0.1:{port}", process, STARTUP_S)
    if problem is None:
        return process
    os.killpg(process.pid, signal.SIGTERM)
    raise SystemExit(f"the dashboard did not start: it {problem}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images" / "dashboard.png")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "SPHERESCOPE_HOME": home, "PYTHONPATH": str(REPO)}
        run_id = _train(env)
        port = _free_port()
        server = _serve(env, port)
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=CHROMIUM, args=["--headless", "--no-sandbox"]
                )
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.goto(f"http://127.0.0.1:{port}/run?run_id={run_id}")
                page.locator(".spherescope-live-chart canvas").nth(3).wait_for(timeout=90_000)
                page.wait_for_timeout(2000)  # the views finish drawing
                args.out.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(args.out))
                browser.close()
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(30)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
