"""A full disk under the run store: a real ``spherescope train`` and
a real worker write into a small tmpfs until it is full (runs long enough that their
scalars are flushed before the evaluations fill it: a 400-step run could finish
within the first flush interval and leave no row to check). The run ends ``failed`` with
the one-line reason, the command prints that line (no traceback), and every row
written before stays readable."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from worker_fixtures import WorkerProcess, config, wait_status

from db import queries
from db.store import RunStore
from worker.reaper import reap_lost
from worker.tasks import train_run

ROOT = Path(__file__).resolve().parents[2]

CONFIG = """
[data]
name = "digits"
batch_size = 20
samples_per_class = 4
[model]
name = "mlp"
embedding_dim = 16
[training]
steps = 1500
[diagnostics]
eval_every = 200
eval_max_samples = 300
"""


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 700 KiB tmpfs (needs root, as in CI); skipped, saying why, where mounting fails."""
    mount = tmp_path / "disk"
    mount.mkdir()
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=700k", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {result.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _assert_failed_for_lack_of_space(store: RunStore, run_id: str) -> None:
    record = store.get_run(run_id)
    assert record.status == "failed", (record.status, record.status_message)
    assert record.status_message.startswith("no space left on device writing ")
    assert str(store.home) in record.status_message and "\n" not in record.status_message
    assert "Traceback" not in record.status_message
    assert reap_lost(store, max_age_s=0) == []  # never blamed on a dead process
    rows = queries.metric_series(store, [run_id], ["loss/total"], max_points=100_000)
    assert len(rows) > 0 and list(rows["step"]) == sorted(rows["step"])


def test_spherescope_train_on_a_full_disk_fails_with_one_line(small_disk, tmp_path) -> None:
    path = tmp_path / "run.toml"
    path.write_text(CONFIG)
    home = small_disk / "home"
    result = subprocess.run(
        [sys.executable, "-m", "worker.cli", "train", str(path)],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT), SPHERESCOPE_HOME=str(home)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 1, result.stderr[-2000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: no space left on device writing {home}/runs/"), last
    store = RunStore(home)
    (run,) = store.list_runs()
    _assert_failed_for_lack_of_space(store, run.run_id)


def test_a_worker_run_on_a_full_disk_is_failed_not_lost(small_disk, tmp_path, redis_server):
    home = small_disk / "home"
    store = RunStore(home)
    # long enough that scalars are flushed before the evaluations fill the disk
    run_id = store.create_run(config(steps=1500, diagnostics={"eval_every": 200}))
    # A worker of its own (own queue, own store) so the shared worker never takes it.
    worker = WorkerProcess(redis_server.url, home, tmp_path / "worker.log", queues="diskfull")
    worker.start()
    try:
        train_run.apply_async((run_id,), task_id=run_id, queue="diskfull")
        wait_status(store, run_id, {"failed", "finished", "lost"}, timeout_s=180)
        _assert_failed_for_lack_of_space(store, run_id)
    finally:
        worker.stop()
