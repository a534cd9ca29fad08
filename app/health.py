"""Whether a dashboard server answers, and waiting until it does.

Streamlit answers ``/_stcore/health`` once it serves pages. Whatever starts a dashboard
and must wait for it (the tests, the benchmarks, the screenshot script) waits here;
stdlib only, so none of them imports Streamlit for it.
"""

from __future__ import annotations

import subprocess
import time
import urllib.request

HEALTH_PATH = "/_stcore/health"


def answers(base: str) -> bool:
    """Whether the dashboard at ``base`` (``http://host:port``) answers its health check."""
    try:
        with urllib.request.urlopen(base + HEALTH_PATH, timeout=2) as reply:
            return reply.status == 200
    except OSError:
        return False


def wait_until_answering(
    base: str, process: subprocess.Popen | None, timeout_s: float
) -> str | None:
    """None once the dashboard at ``base`` answers; else why not: ``process`` (the
    server, or what runs it) exited first, or ``timeout_s`` passed."""
    deadline = time.monotonic() + timeout_s
    while True:
        if process is not None and process.poll() is not None:
            return f"exited with {process.returncode}"
        if answers(base):
            return None
        if time.monotonic() > deadline:
            return f"did not answer within {timeout_s:g} s"
        time.sleep(0.5)
