"""Worker planning (one per GPU, a CPU worker that sees no GPU) and process groups."""

from __future__ import annotations

import os
import sys
import time

import pytest

from worker.processes import ChildProcess, plan_workers, stop_all, threads_per_cpu_run


def test_a_cpu_only_host_gets_one_cpu_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    (spec,) = plan_workers(0, cpu_concurrency=3)
    assert (spec.queues, spec.concurrency) == (("cpu",), 3)
    threads = str(max(1, len(os.sched_getaffinity(0)) // 3))
    assert spec.env == {"CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": threads}
    argv = spec.argv()
    assert argv[1:6] == ["-m", "celery", "-A", "worker.celery_app", "worker"]
    assert argv[argv.index("--queues") + 1] == "cpu"
    assert argv[argv.index("--pool") + 1] == "prefork"


def test_each_gpu_gets_its_own_single_run_worker() -> None:
    specs = plan_workers(2)
    gpu = [s for s in specs if s.queues == ("gpu",)]
    assert [s.env["CUDA_VISIBLE_DEVICES"] for s in gpu] == ["0", "1"]
    assert [s.concurrency for s in gpu] == [1, 1]
    assert len({s.name for s in specs}) == 3
    with pytest.raises(ValueError, match="at least 1"):
        plan_workers(0, cpu_concurrency=0)


def test_parallel_cpu_runs_share_the_cores_unless_the_user_chose(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert [threads_per_cpu_run(n, cores=8) for n in (1, 2, 3, 8, 16)] == [8, 4, 2, 1, 1]
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    (spec,) = plan_workers(0, cpu_concurrency=2)
    assert "OMP_NUM_THREADS" not in spec.env  # inherited as the user set it


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


def test_stopping_a_child_stops_its_whole_process_group(tmp_path) -> None:
    pid_file = tmp_path / "grandchild"
    # the child starts a grandchild (same process group) and both sleep
    script = (
        "import subprocess, sys, time; "
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); "
        f"open({str(pid_file)!r}, 'w').write(str(p.pid)); time.sleep(600)"
    )
    child = ChildProcess("sleeper", [sys.executable, "-c", script], dict(os.environ))
    deadline = time.monotonic() + 30
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    grandchild = int(pid_file.read_text())
    assert os.getpgid(grandchild) == child.pid != os.getpgid(0)

    stop_all([child], grace_s=5)

    assert child.poll() is not None
    deadline = time.monotonic() + 5
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(grandchild)
