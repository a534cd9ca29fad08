"""``spherescope up``: starts a locked-down Redis, a worker and the app; keeps Redis
alive; stops exactly what it started, ending running runs ``cancelled``, not ``lost``."""

from __future__ import annotations

import os
import re
import signal
import socket
import stat
import subprocess
import sys
import time

import pytest
import redis
from stack_fixtures import Stack, alive, command_line, descendants, health, use_broker
from worker_fixtures import REPO, config, wait_for, wait_status

from db.queries import checkpoints
from db.remote.store import RemoteStore
from db.store import RunStore
from worker import launch
from worker.redis_server import free_port

ENDED = {"finished", "failed", "lost", "cancelled"}


def test_up_starts_everything_and_ctrl_c_stops_everything_it_started(tmp_path) -> None:
    port, ingest_port = free_port(), free_port()
    stack = Stack(tmp_path, "--port", str(port), "--ingest-port", str(ingest_port))
    try:
        stack.wait_ready()
        text = stack.text()
        assert f"dashboard on http://127.0.0.1:{port}" in text
        # the ingest service beside it: a run written through its URL lands in the store
        ingest_url = (stack.home / "stack" / "ingest-url").read_text().strip()
        assert ingest_url == f"http://127.0.0.1:{ingest_port}"
        assert f"ingest service on {ingest_url}" in text
        token = (stack.home / "stack" / "ingest-token").read_text().strip()
        remote = RemoteStore(ingest_url, token, tmp_path / "elsewhere")
        run_id = remote.create_run({}, "through up", kind="external", status="running")
        remote.end_run(run_id, "finished")
        assert RunStore(stack.home).get_run(run_id).status == "finished"
        assert re.search(r"private Redis on redis://:\*\*\*@127\.0\.0\.1:\d+/0", text)
        assert stack.redis_url not in text  # the password is never printed
        wait_for(lambda: health(port), 120, "the dashboard's health endpoint")
        broker = redis.Redis.from_url(stack.redis_url)
        assert broker.ping()
        started = descendants(stack.process.pid)
        assert len(started) >= 4  # redis-server, celery main + pool child, streamlit

        stack.signal(signal.SIGINT)
        assert stack.process.wait(60) == 0
        assert "spherescope: stopped" in stack.text()
        still = {pid for pid in started if alive(pid)}
        assert still == set(), f"left running: {still}"
        assert not health(port)
        with pytest.raises(redis.ConnectionError):
            broker.ping()
        assert not stack.url_file.exists()
        assert not (stack.home / "stack" / "ingest-url").exists()
    finally:
        stack.close()


def test_up_refuses_to_expose_the_dashboard_without_a_token(tmp_path) -> None:
    stack = Stack(tmp_path, "--host", "0.0.0.0", "--port", str(free_port()))
    assert stack.process.wait(60) == 2
    assert "set SPHERESCOPE_TOKEN to a secret first" in stack.text()
    assert descendants(stack.process.pid) == set()


@pytest.fixture(scope="module")
def stack(tmp_path_factory) -> Stack:
    """A stack without the app, two runs in parallel; the last test of this file stops it."""
    running = Stack(tmp_path_factory.mktemp("stack"), "--no-app", "--concurrency", "2")
    try:
        yield running.wait_ready()
    finally:
        running.close()


def test_the_private_redis_needs_the_password_and_has_no_admin_commands(stack) -> None:
    url_file = stack.url_file
    assert stat.S_IMODE(url_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(url_file.parent.stat().st_mode) == 0o700
    port = int(stack.redis_url.rsplit(":", 1)[1].split("/")[0])
    with pytest.raises(redis.AuthenticationError):
        redis.Redis(port=port).ping()
    with pytest.raises(redis.AuthenticationError):
        redis.Redis(port=port, password="guess").ping()
    client = redis.Redis.from_url(stack.redis_url)
    for command in (("CONFIG", "SET", "dir", "/tmp"), ("DEBUG", "SLEEP", "0"), ("SHUTDOWN",)):
        with pytest.raises(redis.ResponseError, match="unknown command"):
            client.execute_command(*command)
    with pytest.raises(redis.ResponseError, match="unknown command"):
        client.execute_command("REPLICAOF", "127.0.0.1", "1")
    # the password is in no command line (other users can read those)
    password = stack.redis_url.split(":")[2].split("@")[0]
    assert password not in command_line(stack.redis_pid())


def test_status_without_redis_url_finds_the_stack(stack) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "worker.cli", "status", "--timeout", "3"],
        cwd=REPO,
        env=stack.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "broker     redis://:***@127.0.0.1:" in done.stdout
    assert re.search(r"worker     cpu-\w+@\S+ \[cpu\] idle", done.stdout)


def test_a_killed_redis_is_restarted_and_the_stack_keeps_working(stack) -> None:
    store = RunStore(stack.home)
    url, pid = stack.redis_url, stack.redis_pid()
    stack_pid_before = set(descendants(stack.process.pid))
    killed_at = time.monotonic()
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: "private Redis restarted" in stack.text(), 30, "the Redis restart")
    restarted_in = time.monotonic() - killed_at
    assert stack.redis_url == url  # same port and password
    new_pid = stack.redis_pid()
    assert new_pid != pid and new_pid not in stack_pid_before
    with use_broker(url):
        run_id = launch(config(steps=20), store=store)
        record = wait_status(store, run_id, ENDED, 180)
    assert record.status == "finished", record.status_message
    print(f"redis restarted {restarted_in:.1f} s after SIGKILL; launch afterwards finished")


def test_sigterm_cancels_the_running_runs_with_their_final_checkpoint(stack) -> None:
    store = RunStore(stack.home)
    with use_broker(stack.redis_url):
        run_ids = [launch(config(steps=100_000), store=store) for _ in range(2)]
        for run_id in run_ids:
            wait_for(lambda r=run_id: (store.get_run(r).progress_step or 0) >= 5, 180, "training")
    started = descendants(stack.process.pid)

    signalled = time.monotonic()
    stack.signal(signal.SIGTERM)
    records = [wait_status(store, run_id, ENDED, 30) for run_id in run_ids]
    took = time.monotonic() - signalled
    assert stack.process.wait(60) == 0

    assert took < 10.0
    for record in records:
        assert record.status == "cancelled", record.status_message
        message = record.status_message
        match = re.fullmatch(r"stopped: the stack was shut down at step (\d+)", message)
        assert match, record.status_message
        step = int(match.group(1))
        assert step >= 5
        saved = checkpoints(store, record.run_id)  # flushed: the tracker wrote its last rows
        assert int(saved["step"].max()) == step
        assert (store.checkpoint_dir(record.run_id) / f"step_{step:08d}.pt").is_file()
    assert "2 running run(s) cancelled" in stack.text()
    assert {pid for pid in started if alive(pid)} == set()
    assert not stack.url_file.exists()
    print(f"SIGTERM with 2 running runs: both cancelled in {took:.1f} s")


def squat(port: int, timeout: float = 15.0) -> socket.socket:
    """A listening socket on ``port`` once the killed server's socket is gone (the
    kernel may take a moment after the process is reaped, on a loaded machine)."""
    deadline = time.monotonic() + timeout
    while True:
        squatter = socket.socket()
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            squatter.bind(("127.0.0.1", port))
        except OSError:
            squatter.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
            continue
        squatter.listen()
        return squatter


def test_up_stops_the_stack_when_redis_cannot_be_restarted(tmp_path) -> None:
    stack = Stack(tmp_path, "--no-app")
    try:
        stack.wait_ready()
        started = descendants(stack.process.pid)
        port = int(stack.redis_url.rsplit(":", 1)[1].split("/")[0])
        redis_pid = stack.redis_pid()
        stack.signal(signal.SIGSTOP)  # so the port is ours before up looks again
        try:
            os.kill(redis_pid, signal.SIGKILL)
            wait_for(lambda: not alive(redis_pid), 10, "redis-server to die")
            squatter = squat(port)
        finally:
            stack.signal(signal.SIGCONT)
        with squatter:
            # promptly: each failed start is noticed at once (one ping against the
            # squatter used to take 15 s with redis-py's retries: ~70 s in all)
            assert stack.process.wait(45) == 1
        text = stack.text()
        assert "could not restart the private Redis" in text
        assert "stopping the stack" in text and "spherescope: stopped" in text
        assert {pid for pid in started if alive(pid)} == set()
    finally:
        stack.close()


def test_a_second_signal_forces_the_stop(tmp_path) -> None:
    stack = Stack(tmp_path, "--no-app")
    try:
        stack.wait_ready()
        store = RunStore(stack.home)
        with use_broker(stack.redis_url):
            run_id = launch(config(steps=100_000), store=store)
            wait_for(lambda: (store.get_run(run_id).progress_step or 0) >= 5, 180, "training")
        started = descendants(stack.process.pid)

        stack.signal(signal.SIGINT)
        time.sleep(0.1)  # two signals sent at once may arrive as one
        stack.signal(signal.SIGINT)
        signalled = time.monotonic()
        assert stack.process.wait(30) == 0
        assert time.monotonic() - signalled < 5.0
        assert "forcing the stop" in stack.text()
        assert {pid for pid in started if alive(pid)} == set()
    finally:
        stack.close()
