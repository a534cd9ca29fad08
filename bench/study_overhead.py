"""Study overhead: what the coordinator adds between runs and what it costs.

Starts a private Redis and one real Celery worker (concurrency 2, so a warm pool
process is waiting when a run ends) on a temporary store, creates a one-arm study of
small synthetic/MLP trials with 2 folds (run in order, one run in flight), and runs its
coordinator as ``spherescope study resume ID`` in a process of its own. Prints:

- the median time from one trial run's end (its status ``finished``) to the next run's
  first logged step (its first scalar's wall time), over every consecutive pair; target
  ≤ 1 s with a warm worker;
- where that time goes, each a median from the previous run's end: the next run queued
  (the coordinator's part), received by the worker (its log), running (claimed by a pool
  process), its first step;
- the coordinator's CPU time, all of it (its start, following the runs, and any
  concatenated evaluation of a reproduction it computed itself), as a share of the
  study's (coordinator + worker and its pool processes, from the processes' rusage);
  target ≤ 2 %. The exit code follows this share and the gap.

    OMP_NUM_THREADS=1 .venv/bin/python bench/study_overhead.py [--trials 5]
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_GAP_S = 1.0
TARGET_SHARE = 0.02


def study_table(trials: int, steps: int) -> dict:
    return {
        "name": "overhead",
        "folds": 2,
        "trials": trials,
        "reproductions": 1,
        "pruning": {"median": False},
        "base": {
            "data": {"name": "synthetic", "batch_size": 16, "samples_per_class": 4,
                     "options": {"num_classes": 32, "dim": 16, "samples_per_class": 30}},
            "model": {"name": "mlp", "embedding_dim": 16},
            "training": {"steps": steps, "device": "cpu"},
            "diagnostics": {"eval_every": 100, "eval_max_samples": 300, "tracked_samples": 0},
            "evaluation": {"verification": False},
        },
        "arms": {"triplet": {"set": {"objective.name": "triplet"},
                             "space": {"objective.options.margin": {"type": "float",
                                                                    "low": 0.05, "high": 0.4}}}},
    }  # fmt: skip


def first_step_wall_time(store, run_id: str) -> float:
    from db.reader import query_arrow
    from db.schema import SCALARS

    table = query_arrow(store, {"t": (SCALARS, [run_id])}, "SELECT min(wall_time) AS w FROM t")
    return float(table.column("w")[0].as_py())


RECEIVED = re.compile(
    r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+): INFO/MainProcess\] "
    r"Task spherescope\.train_run\[([^\]]+)\] received"
)


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a live process (``/proc/PID/stat``)."""
    try:
        fields = (Path("/proc") / str(pid) / "stat").read_text().rsplit(") ", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def received_times(log: Path) -> dict[str, float]:
    """Run id → when the worker's main process received its task (its log, local time)."""
    text = log.read_text(errors="replace")
    return {
        m.group(2): datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
        for m in RECEIVED.finditer(text)
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument(
        "--steps", type=int, default=1500,
        help="steps per run: long enough for the pool process a run leaves to be replaced "
        "by a warm one before the next run (a warm worker, as the target assumes)",
    )  # fmt: skip
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        help="write the coordinator's cProfile here (its CPU figures then include the profiler's)",
    )
    parser.add_argument(
        "--warm-up-s", type=float, default=300.0,
        help="how long the worker's pool processes may take to import the engine (a busy "
        "machine needs more)",
    )  # fmt: skip
    args = parser.parse_args()
    load_before = os.getloadavg()[0]

    from worker.redis_server import PrivateRedis

    home = Path(tempfile.mkdtemp(prefix="spherescope-study-bench-"))
    with PrivateRedis() as server:
        os.environ.update(REDIS_URL=server.url, SPHERESCOPE_HOME=str(home))
        from db.store import RunStore
        from worker.processes import WorkerSpec
        from worker.study import control
        from worker.study.runs import study_runs
        from worker.study.spec import parse_spec

        store = RunStore(home)
        env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"),
                   CUDA_VISIBLE_DEVICES="", PYTHONPATH=str(REPO))  # fmt: skip
        log = home / "worker.log"
        with log.open("wb") as out:
            worker = subprocess.Popen(
                WorkerSpec("bench@%h", ("cpu",), 2, {}).argv(), cwd=REPO, env=env,
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + args.warm_up_s
        while log.read_text(errors="replace").count(" warm (engine imported") < 2:
            if time.monotonic() > deadline:
                raise TimeoutError("the worker's pool processes did not warm up")
            time.sleep(0.2)
        study_id = control.create_study(
            home, parse_spec(study_table(args.trials, args.steps)), parallel=1
        )
        profile = ["-m", "cProfile", "-o", str(args.profile.resolve())] if args.profile else []
        coordinator = subprocess.Popen(
            [sys.executable, *profile, "-m", "worker.cli", "study", "resume", study_id],
            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        samples = []  # (wall time, the coordinator's CPU seconds so far), from /proc
        while True:
            pid, code, coordinator_usage = os.wait4(coordinator.pid, os.WNOHANG)
            if pid:
                break
            samples.append((time.time(), process_cpu_s(coordinator.pid)))
            time.sleep(0.1)
        worker.terminate()
        _, _, worker_usage = os.wait4(worker.pid, 0)
        if os.waitstatus_to_exitcode(code) != 0:
            raise RuntimeError(f"the coordinator exited {code}; see {home}/studies")
        runs = sorted(study_runs(store, study_id), key=lambda r: r.record.created_at)
        first_queued = runs[0].record.created_at.timestamp()
        # its start: imports, the journal, the first launch (the first validation)
        startup_cpu = next(cpu for at, cpu in samples if at >= first_queued)
        received = received_times(log)
        # the concatenated evaluations' CPU, by the process that computed each (its pid)
        evaluations = [
            json.loads(path.read_text())
            for path in (home / "studies" / study_id / "concatenated").glob("*.json")
        ]
        evaluation_cpu = sum(
            float(e.get("cpu_s", 0.0)) for e in evaluations if e.get("pid") == coordinator.pid
        )
        worker_evaluation_cpu = sum(
            float(e.get("cpu_s", 0.0)) for e in evaluations if e.get("pid") != coordinator.pid
        )
        gaps, queued, got, running = [], [], [], []
        for previous, following in itertools.pairwise(runs):
            if previous.record.status != "finished" or following.record.status != "finished":
                continue
            end = previous.record.finished_at.timestamp()
            gaps.append(first_step_wall_time(store, following.record.run_id) - end)
            queued.append(following.record.created_at.timestamp() - end)
            got.append(received.get(following.record.run_id, float("nan")) - end)
            running.append(following.record.started_at.timestamp() - end)

    print(f"load average (1 min) {load_before:.2f} at the start, {os.getloadavg()[0]:.2f} at "
          f"the end, on {os.cpu_count()} CPUs")  # fmt: skip
    coordinator_cpu = coordinator_usage.ru_utime + coordinator_usage.ru_stime
    worker_cpu = worker_usage.ru_utime + worker_usage.ru_stime
    share = coordinator_cpu / (coordinator_cpu + worker_cpu)
    median = statistics.median(gaps)
    print(f"of which the coordinator's part (run end → next run queued): median "
          f"{statistics.median(queued):.2f} s, max {max(queued):.2f} s")  # fmt: skip
    print(f"from a run's end, medians: next run queued +{statistics.median(queued):.2f} s, "
          f"received by the worker +{statistics.median(got):.2f} s, running "
          f"+{statistics.median(running):.2f} s, first step +{median:.2f} s")  # fmt: skip
    print(f"{len(runs)} runs; run end → next run's first step: median {median:.2f} s "
          f"(min {min(gaps):.2f}, max {max(gaps):.2f}); target ≤ {TARGET_GAP_S:.0f} s: "
          f"{'met' if median <= TARGET_GAP_S else 'NOT met'}")  # fmt: skip
    total = coordinator_cpu + worker_cpu
    verdict = "met" if share <= TARGET_SHARE else "NOT met"
    print(f"coordinator CPU (all of it) {coordinator_cpu:.1f} s of the study's {total:.1f} s "
          f"= {share:.1%}; target ≤ {TARGET_SHARE:.0%}: {verdict}")  # fmt: skip
    after = coordinator_cpu - startup_cpu - evaluation_cpu
    print(f"of which its start (until the first run is queued) {startup_cpu:.2f} s = "
          f"{startup_cpu / total:.1%}; concatenated evaluations it computed itself "
          f"{evaluation_cpu:.2f} s; the rest {after:.2f} s = {after / len(runs):.3f} s a run = "
          f"{after / total:.1%}")  # fmt: skip
    on_worker = sum(e.get("pid") != coordinator.pid for e in evaluations)
    print(f"concatenated evaluations computed by the worker: {on_worker} of {len(evaluations)}, "
          f"{worker_evaluation_cpu:.2f} s of the worker's CPU")  # fmt: skip
    return 0 if median <= TARGET_GAP_S and share <= TARGET_SHARE else 1


if __name__ == "__main__":
    sys.exit(main())
