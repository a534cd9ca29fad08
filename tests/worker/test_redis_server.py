"""The private Redis: password in the URL, no admin commands, data kept across a restart."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
import redis

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
