"""``spherescope --help`` and ``spherescope status`` start without the heavy libraries:
each command imports what it needs inside its handler (``worker.cli``)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "pandas", "streamlit", "duckdb", "celery", "sphere_engine.models")
PROBE = f"""
import json, sys
from worker.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))
"""


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("argv", [["--help"], ["status"], ["store", "--help"]])
def test_help_and_status_import_no_heavy_library(tmp_path: Path, argv: list[str]) -> None:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO),
           "SPHERESCOPE_HOME": str(tmp_path / "home"),
           "REDIS_URL": f"redis://127.0.0.1:{closed_port()}/0"}  # fmt: skip
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
    if argv == ["status"]:
        assert "broker unreachable" in done.stdout and "0 running, 0 queued" in done.stdout
