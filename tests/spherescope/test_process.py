"""The SDK in a process of its own: what it imports, and what a killed process leaves."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from db import queries
from db.store import RunStore
from worker.reaper import reap_lost

ROOT = Path(__file__).parents[2]

#: One SDK process for both tests (one torch import): it uses the SDK, prints the
#: modules it pulled in that it must not, then logs a live run until it is killed.
_SDK_PROCESS = """
import sys, time, torch, spherescope
with spherescope.init() as run:
    run.log_embeddings(torch.randn(6, 3), [0, 0, 1, 1, 2, 2], step=1)
    run.evaluate(torch.randn(6, 3), [0, 0, 1, 1, 2, 2], step=1)
banned = {'celery', 'streamlit', 'worker', 'app'}
print(sorted(m for m in sys.modules if m.split('.')[0] in banned), flush=True)
run = spherescope.init(name="killed")
print(run.id, flush=True)
step = 0
while True:
    step += 1
    run.log_embeddings(torch.randn(8, 4), torch.arange(8) % 2, step=step)
    run.log({"loss/total": 1.0}, step=step)
    time.sleep(0.05)
"""


@dataclass
class SdkProcess:
    process: subprocess.Popen[str]
    home: Path
    banned: str  # the banned modules it imported, as printed
    run_id: str  # its live run


@pytest.fixture(scope="module")
def sdk_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SdkProcess]:
    home = tmp_path_factory.mktemp("sdk") / "store"
    process = subprocess.Popen(
        [sys.executable, "-c", _SDK_PROCESS],
        cwd=ROOT,
        env={**os.environ, "SPHERESCOPE_HOME": str(home), "SPHERESCOPE_HEARTBEAT_S": "0.2"},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        banned, run_id = process.stdout.readline().strip(), process.stdout.readline().strip()
        assert process.poll() is None, f"the SDK process ended with {process.returncode}"
        yield SdkProcess(process, home, banned, run_id)
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)


def test_importing_and_using_spherescope_pulls_in_neither_celery_nor_streamlit(
    sdk_process: SdkProcess,
) -> None:
    assert sdk_process.banned == "[]"
    [used] = [r for r in RunStore(sdk_process.home).list_runs() if r.run_id != sdk_process.run_id]
    assert used.status == "finished"


def test_a_killed_sdk_process_is_marked_lost_by_the_reaper(
    sdk_process: SdkProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPHERESCOPE_LOST_AFTER_S", "1.5")
    store, run_id = RunStore(sdk_process.home), sdk_process.run_id
    try:
        time.sleep(2.5)  # longer than lost-after: only the heartbeat keeps it alive
        assert reap_lost(store) == []
        assert queries.get_run(store, run_id).status == "running"
    finally:
        os.kill(sdk_process.process.pid, signal.SIGKILL)
        sdk_process.process.wait(timeout=30)
    time.sleep(2.0)
    assert reap_lost(store) == [run_id]
    assert queries.get_run(store, run_id).status == "lost"
