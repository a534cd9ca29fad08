"""The ingest service as a real process for tests (``python -m worker.ingest``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

from worker_fixtures import REPO, wait_for

TOKEN = "lab-secret"


class Server:
    """``python -m worker.ingest`` on ``home``'s store, logging to a file."""

    def __init__(self, home: Path, port: int) -> None:
        self.home, self.port = home, port
        self.log = home.parent / f"ingest-{port}.log"
        self.url = f"http://127.0.0.1:{port}"
        self.start()

    def start(self) -> Server:
        env = {**os.environ, "SPHERESCOPE_HOME": str(self.home), "SPHERESCOPE_TOKEN": TOKEN}
        env["PYTHONPATH"] = str(REPO)
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "worker.ingest", "--port", str(self.port)],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        wait_for(self.answers, 60, "the ingest service")
        return self

    def answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/v1/health", timeout=2) as response:
                return response.status == 200
        except OSError:
            return False

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
