"""The SDK in a process of its own: what it imports, and what a killed process leaves."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from db import queries
from db.store import RunStore
from worker.reaper import reap_lost

ROOT = Path(__file__).parents[2]

_LIVE_RUN = """
import sys, time, torch, spherescope
run = spherescope.init(name="killed")
print(run.id, flush=True)
step = 0
while True:
    step += 1
    run.log_embeddings(torch.randn(8, 4), torch.arange(8) % 2, step=step)
    run.log({"loss/total": 1.0}, step=step)
    time.sleep(0.05)
"""


def _python(code: str, home: Path, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "SPHERESCOPE_HOME": str(home), **env},
        stdout=subprocess.PIPE,
        text=True,
    )


def test_importing_and_using_spherescope_pulls_in_neither_celery_nor_streamlit(home: Path) -> None:
    code = (
        "import sys, torch, spherescope\n"
        "with spherescope.init() as run:\n"
        "    run.log_embeddings(torch.randn(6, 3), [0, 0, 1, 1, 2, 2], step=1)\n"
        "    run.evaluate(torch.randn(6, 3), [0, 0, 1, 1, 2, 2], step=1)\n"
        "banned = {'celery', 'streamlit', 'worker', 'app'}\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in banned)\n"
        "print(bad)\n"
    )
    process = _python(code, home)
    out, _ = process.communicate(timeout=300)
    assert process.returncode == 0
    assert out.strip().splitlines()[-1] == "[]"


def test_a_killed_sdk_process_is_marked_lost_by_the_reaper(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPHERESCOPE_LOST_AFTER_S", "1.5")
    process = _python(_LIVE_RUN, home, SPHERESCOPE_HEARTBEAT_S="0.2")
    try:
        assert process.stdout is not None
        run_id = process.stdout.readline().strip()
        store = RunStore(home)
        time.sleep(2.5)  # longer than lost-after: only the heartbeat keeps it alive
        assert reap_lost(store) == []
        assert queries.get_run(store, run_id).status == "running"
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    time.sleep(2.0)
    assert reap_lost(store) == [run_id]
    assert queries.get_run(store, run_id).status == "lost"
