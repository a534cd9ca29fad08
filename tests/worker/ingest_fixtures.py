"""The ingest service as a real process for tests (``python -m worker.ingest``)."""

from __future__ import annotations

import os
import signal
import ssl
import subprocess
import sys
import urllib.request
from pathlib import Path

from worker_fixtures import REPO, wait_for

TOKEN = "lab-secret"


class Server:
    """``python -m worker.ingest`` on ``home``'s store, logging to a file."""

    def __init__(self, home: Path, port: int, tls: tuple[Path, Path] | None = None) -> None:
        """``tls``: (certificate, key) files: HTTPS."""
        self.home, self.port, self.tls = home, port, tls
        self.log = home.parent / f"ingest-{port}.log"
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{port}"
        self.start()

    def start(self) -> Server:
        env = {**os.environ, "SPHERESCOPE_HOME": str(self.home), "SPHERESCOPE_TOKEN": TOKEN}
        env["PYTHONPATH"] = str(REPO)
        argv = [sys.executable, "-m", "worker.ingest", "--port", str(self.port)]
        if self.tls:
            argv += ["--ssl-certfile", str(self.tls[0]), "--ssl-keyfile", str(self.tls[1])]
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                argv,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        wait_for(self.answers, 60, "the ingest service")
        return self

    def answers(self) -> bool:
        context = ssl.create_default_context(cafile=str(self.tls[0])) if self.tls else None
        try:
            health = f"{self.url}/v1/health"
            with urllib.request.urlopen(health, timeout=2, context=context) as response:
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
