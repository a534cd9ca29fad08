"""Helpers of the execution tests: tiny configs, waiting, a real worker subprocess."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from db.records import RunRecord
from db.store import RunStore
from worker.processes import WorkerSpec

REPO = Path(__file__).resolve().parents[2]
T = TypeVar("T")

# Tiny configs (digits, MLP): a few hundred ms of training per hundred steps.
BASE: dict[str, Any] = {
    "data": {"name": "digits", "batch_size": 20, "samples_per_class": 4},
    "model": {"name": "mlp", "embedding_dim": 16},
    "objective": {"kind": "loss", "name": "triplet"},
    "training": {"steps": 30, "device": "cpu"},
    "diagnostics": {"eval_every": 1000, "eval_max_samples": 300},
}


def config(steps: int = 30, **sections: dict[str, Any]) -> dict[str, Any]:
    data = {name: dict(values) for name, values in BASE.items()}
    data["training"]["steps"] = steps
    for name, values in sections.items():
        data.setdefault(name, {}).update(values)
    return data


def wait_for(predicate: Callable[[], T], timeout_s: float, what: str, interval: float = 0.1) -> T:
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(interval)


def wait_status(store: RunStore, run_id: str, statuses: set[str], timeout_s: float) -> RunRecord:
    def reached() -> RunRecord | None:
        record = store.get_run(run_id)
        return record if record.status in statuses else None

    return wait_for(reached, timeout_s, f"run {run_id} to reach {sorted(statuses)}")


class WorkerProcess:
    """A real ``celery worker`` subprocess in its own process group, logging to a file."""

    names = itertools.count()

    def __init__(
        self, redis_url: str, home: Path, log: Path, queues: str = "cpu", concurrency: int = 2
    ) -> None:
        self.redis_url, self.home, self.log = redis_url, home, log
        self.queues, self.concurrency = queues, concurrency
        self.process: subprocess.Popen[bytes] | None = None
        self.node = ""

    def start(self, timeout_s: float = 90.0) -> WorkerProcess:
        self.node = f"test{next(self.names)}@localhost"
        env = dict(
            os.environ,
            REDIS_URL=self.redis_url,
            SPHERESCOPE_HOME=str(self.home),
            OMP_NUM_THREADS="1",
            CUDA_VISIBLE_DEVICES="",
            PYTHONPATH=str(REPO),
        )
        argv = WorkerSpec(self.node, tuple(self.queues.split(",")), self.concurrency, {}).argv()
        offset = self.log.stat().st_size if self.log.exists() else 0
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                argv,
                cwd=REPO,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        wait_for(
            lambda: f"{self.node} ready." in self.log_text(offset),
            timeout_s,
            f"worker {self.node} to be ready",
        )
        return self

    def log_text(self, offset: int = 0) -> str:
        with self.log.open("rb") as handle:
            handle.seek(offset)
            return handle.read().decode(errors="replace")

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL the whole worker (main process and pool children) at once."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self, timeout_s: float = 30.0) -> None:
        if not self.alive:
            return
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def ensure_running(self) -> WorkerProcess:
        return self if self.alive else self.start()
