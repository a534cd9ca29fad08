"""Child processes started by ``spherescope up`` / ``spherescope worker``.

Each child runs in its own process group (session), so stopping one stops everything
it forked (a Celery worker's pool children, Streamlit's helpers) and nothing else.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from worker import settings
from worker.parent_death import end_with_this_process

GPU_PROBE = "import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)"


def count_gpus(timeout_s: float = 120.0) -> int:
    """CUDA devices visible here, probed in a subprocess so this process never touches CUDA."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", GPU_PROBE],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
        return int(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else 0
    except (subprocess.TimeoutExpired, ValueError, IndexError, OSError):
        return 0


@dataclass(frozen=True)
class WorkerSpec:
    """One Celery worker: the queues it serves, its pool size and extra environment."""

    name: str
    queues: tuple[str, ...]
    concurrency: int
    env: Mapping[str, str]

    def argv(self, loglevel: str = "INFO") -> list[str]:
        return [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "worker.celery_app",
            "worker",
            "--pool",
            "prefork",
            "--concurrency",
            str(self.concurrency),
            "--queues",
            ",".join(self.queues),
            "--hostname",
            self.name,
            "--loglevel",
            loglevel,
            "--without-gossip",
            "--without-mingle",
        ]


def threads_per_cpu_run(concurrency: int, cores: int | None = None) -> int:
    """Torch (OpenMP) threads for each of a CPU worker's ``concurrency`` parallel runs:
    the cores shared out. By default each process takes every core, so two runs on two
    cores ran four threads that kept stealing each other's time slices: with a browser
    watching, a run trained at a tenth of its speed instead of the ~80 % its share of
    the CPU allows."""
    cores = cores or len(os.sched_getaffinity(0))
    return max(1, cores // concurrency)


def plan_workers(gpus: int, cpu_concurrency: int = 1) -> list[WorkerSpec]:
    """One worker per GPU (pinned with CUDA_VISIBLE_DEVICES, one run at a time) plus one
    CPU worker that sees no GPU, so CPU runs never compete for a GPU. The CPU worker's
    runs share the cores out (``threads_per_cpu_run``) unless ``OMP_NUM_THREADS`` is
    set, which then wins."""
    if cpu_concurrency < 1:
        raise ValueError(f"--concurrency: {cpu_concurrency} must be at least 1")
    tag = uuid.uuid4().hex[:6]
    specs = [
        WorkerSpec(f"gpu{i}-{tag}@%h", (settings.GPU_QUEUE,), 1, {"CUDA_VISIBLE_DEVICES": str(i)})
        for i in range(gpus)
    ]
    cpu_env = {"CUDA_VISIBLE_DEVICES": ""}
    if "OMP_NUM_THREADS" not in os.environ:
        cpu_env["OMP_NUM_THREADS"] = str(threads_per_cpu_run(cpu_concurrency))
    specs.append(WorkerSpec(f"cpu-{tag}@%h", (settings.CPU_QUEUE,), cpu_concurrency, cpu_env))
    return specs


class ChildProcess:
    """A started command in its own process group."""

    def __init__(
        self, label: str, argv: Sequence[str], env: Mapping[str, str], cwd: str | None = None
    ) -> None:
        self.label = label
        self.process = subprocess.Popen(
            list(argv),
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
            preexec_fn=end_with_this_process(),
        )

    @property
    def pid(self) -> int:
        return self.process.pid

    def poll(self) -> int | None:
        return self.process.poll()

    def stop(self, grace_s: float = 10.0) -> int:
        """SIGTERM to the group, then SIGKILL after ``grace_s``; the exit code."""
        if self.process.poll() is None:
            _signal_group(self.process.pid, signal.SIGTERM)
            try:
                return self.process.wait(grace_s)
            except subprocess.TimeoutExpired:
                pass
        _signal_group(self.process.pid, signal.SIGKILL)  # also stray grandchildren
        return self.process.wait()


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signum)


def child_env(redis_url: str, home: str, extra: Mapping[str, str] = ()) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"REDIS_URL": redis_url, "SPHERESCOPE_HOME": home, **dict(extra)})
    return env


def stop_all(children: Sequence[ChildProcess], grace_s: float = 10.0) -> None:
    """SIGTERM every child's group at once, then wait; what is left after ``grace_s``
    seconds is killed. The group includes a Celery worker's pool children, which die
    mid-step on SIGTERM (their run then ends ``lost``): stop workers that may be training
    with ``shutdown.stop_workers_gracefully`` first."""
    deadline = time.monotonic() + grace_s
    for child in children:
        if child.poll() is None:
            _signal_group(child.pid, signal.SIGTERM)
    for child in reversed(children):
        child.stop(max(0.1, deadline - time.monotonic()))
