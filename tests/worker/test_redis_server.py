"""The private Redis: password in the URL, no admin commands, data kept across a restart."""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
from worker_fixtures import REPO

from worker.redis_server import DISABLED_COMMANDS, PrivateRedis, masked


@pytest.fixture(scope="module")
def server():
    with PrivateRedis() as running:
        yield running


def test_clients_without_the_password_are_refused(server) -> None:
    assert redis.Redis.from_url(server.url).ping()
    assert server.url.startswith(f"redis://:{server.password}@127.0.0.1:{server.port}/")
    with pytest.raises(redis.AuthenticationError):
        redis.Redis(port=server.port).ping()
    with pytest.raises(redis.AuthenticationError):
        redis.Redis(port=server.port, password=server.password[:-1]).ping()


def test_admin_commands_do_not_exist(server) -> None:
    client = redis.Redis.from_url(server.url)
    for command in DISABLED_COMMANDS:
        with pytest.raises(redis.ResponseError, match="unknown command"):
            client.execute_command(command, "x")
    with pytest.raises(redis.ResponseError, match="unknown command"):
        client.config_set("dir", "/tmp")


def test_its_settings_and_data_are_private(server) -> None:
    folder = Path(server.data_dir)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "redis.conf").stat().st_mode) == 0o600
    cmdline = Path(f"/proc/{server.process.pid}/cmdline").read_bytes().decode()
    assert server.password not in cmdline
    assert masked(server.url) == f"redis://:***@127.0.0.1:{server.port}/0"


def test_a_killed_server_restarts_with_its_port_password_and_queues() -> None:
    with PrivateRedis() as server:
        url = server.url
        client = redis.Redis.from_url(url)
        client.rpush("cpu", "message")
        server.process.kill()
        server.process.wait()
        assert not server.alive()
        server.restart()
        assert server.url == url
        assert client.lrange("cpu", 0, -1) == [b"message"]


OWNER = """
import sys, time
from worker.processes import ChildProcess
from worker.redis_server import PrivateRedis
server = PrivateRedis().start()
child = ChildProcess("sleeper", [sys.executable, "-c", "import time; time.sleep(120)"], {})
print(server.process.pid, child.pid, flush=True)
time.sleep(120)
"""


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # a zombie (already exited, not yet reaped by init) counts as gone
    return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_the_stacks_children_end_when_their_owner_is_killed_outright() -> None:
    """``spherescope up`` SIGKILLed (OOM killer, kill -9, a CI timeout) used to leave its
    private Redis and its children running as orphans, for good."""
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER],
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        stdout=subprocess.PIPE,
        text=True,
    )
    children: list[int] = []
    try:
        assert owner.stdout is not None
        children = [int(pid) for pid in owner.stdout.readline().split()]
        assert len(children) == 2 and not any(_gone(pid) for pid in children)
        owner.kill()
        owner.wait()
        deadline = time.monotonic() + 10
        while not all(_gone(pid) for pid in children) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [pid for pid in children if not _gone(pid)] == []
    finally:
        owner.kill()
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
