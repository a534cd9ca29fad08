"""No default broker: without REDIS_URL (or a running `spherescope up` on this store),
launching, `spherescope status/worker` and a bare Celery worker fail with one line."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from stack_fixtures import use_broker
from worker_fixtures import REPO, config

from db.store import RunStore
from worker import cli, launch, launch_sweep
from worker.settings import REDIS_URL_MISSING, configured_redis_url, stack_url_file

MISSING = "REDIS_URL is not set: start the stack with `spherescope up` or set REDIS_URL"


@pytest.fixture
def no_broker(tmp_path, monkeypatch):
    """This process has no REDIS_URL, no broker in its Celery app, and a store no
    `spherescope up` runs on."""
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv("SPHERESCOPE_HOME", str(tmp_path / "home"))
    with use_broker(None):
        yield RunStore(tmp_path / "home")


def test_the_message_says_what_to_do() -> None:
    assert REDIS_URL_MISSING == MISSING


def test_launch_without_a_broker_fails_before_recording_anything(no_broker) -> None:
    with pytest.raises(ValueError, match=r"^REDIS_URL is not set: start the stack"):
        launch(config(), store=no_broker)
    with pytest.raises(ValueError, match=r"^REDIS_URL is not set: start the stack"):
        launch_sweep(config(), {"optimizer.lr": [0.1, 0.2]}, [0], store=no_broker)
    assert no_broker.list_runs() == []


def test_status_and_worker_without_a_broker_print_one_line(no_broker, capsys) -> None:
    assert cli.main(["status"]) == 2
    assert capsys.readouterr().err.strip() == f"spherescope status: {MISSING}"
    assert cli.main(["worker"]) == 2
    assert MISSING in capsys.readouterr().err


def test_a_celery_worker_without_a_broker_stops_at_once(tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env.update(SPHERESCOPE_HOME=str(tmp_path / "home"), PYTHONPATH=str(REPO))
    argv = [sys.executable, "-m", "celery", "-A", "worker.celery_app", "worker", "--pool", "solo"]
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert f"spherescope worker: {MISSING}" in done.stdout + done.stderr


def test_status_finds_the_stack_of_this_store_through_its_url_file(
    no_broker, redis_server, capsys
) -> None:
    url_file = stack_url_file(no_broker.home)
    url_file.parent.mkdir(parents=True)
    url_file.write_text(redis_server.url + "\n")
    assert configured_redis_url() == redis_server.url

    assert cli.main(["status", "--timeout", "1"]) == 0

    out = capsys.readouterr().out
    assert f"broker     redis://:***@127.0.0.1:{redis_server.port}/0" in out
    assert re.search(r"queues     gpu: \d+ waiting, cpu: \d+ waiting", out)
    assert redis_server.password not in out
