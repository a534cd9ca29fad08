"""Starting, resuming, inspecting and cancelling studies: what the CLI, the Launch page
and ``spherescope up`` call.

A study is created (checked spec written to its folder) before its coordinator starts,
so a coordinator in the foreground (``study run``, e.g. on a SLURM login node) or in a
detached process (the Launch page, ``spherescope up``) continues the same study.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from db.atomic import read_json, write_json_atomic
from db.store import RunStore
from worker.study import storage
from worker.study.coordinator import Coordinator, Progress
from worker.study.launcher import launcher_for
from worker.study.lock import coordinator_pid, coordinator_running
from worker.study.runs import study_runs
from worker.study.spec import StudySpec, check_spec

LAUNCH_FILE = "launch.json"  # how its runs are launched: parallel, slurm request


def create_study(
    home: str | os.PathLike[str],
    spec: StudySpec,
    *,
    parallel: int = 1,
    slurm: Mapping[str, Any] | None = None,
) -> str:
    """Check ``spec`` (every config it can launch) and create the study's folder; its id.
    Nothing is created for a spec that fails a check."""
    check_spec(spec)
    if parallel < 1:
        raise ValueError(f"parallel: {parallel} must be at least 1")
    if slurm is None:
        from worker.celery_app import broker_url

        broker_url()  # no broker configured: fail before anything is created
    study_id = storage.create_study_folder(home, spec)
    launch = {"parallel": parallel, "slurm": dict(slurm) if slurm is not None else None}
    write_json_atomic(storage.study_dir(home, study_id) / LAUNCH_FILE, launch)
    return study_id


def launch_settings(home: str | os.PathLike[str], study_id: str) -> dict[str, Any]:
    return read_json(storage.study_dir(home, study_id) / LAUNCH_FILE) or {"parallel": 1}


def coordinate(
    home: str | os.PathLike[str],
    study_id: str,
    *,
    parallel: int | None = None,
    poll_s: float = 0.25,
    max_seconds: float | None = None,
) -> Progress:
    """Run the study's coordinator in this process until the study ends."""
    storage.check_study_id(home, study_id)
    settings = launch_settings(home, study_id)
    if parallel is not None and parallel != settings.get("parallel"):
        settings["parallel"] = parallel
        write_json_atomic(storage.study_dir(home, study_id) / LAUNCH_FILE, settings)
    store = RunStore(home)
    launcher = launcher_for(store, study_id, settings.get("slurm"))
    coordinator = Coordinator(
        home, study_id, launcher, parallel=int(settings.get("parallel", 1)), poll_s=poll_s,
        store=store,
    )  # fmt: skip
    return coordinator.run(max_seconds)


def coordinator_log(home: str | os.PathLike[str], study_id: str) -> Path:
    return storage.study_dir(home, study_id) / "coordinator.log"


def start_detached(
    home: str | os.PathLike[str], study_id: str, redis_url: str | None = None
) -> int:
    """Start ``spherescope study resume ID`` as a process of its own (it outlives the
    caller, logging to the study's folder); its pid. ``redis_url``: the broker its runs
    go to (default: this process's ``REDIS_URL``)."""
    env = dict(os.environ, SPHERESCOPE_HOME=str(home))
    if redis_url:
        env["REDIS_URL"] = redis_url
    with coordinator_log(home, study_id).open("ab") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "worker.cli", "study", "resume", study_id],
            env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
    return process.pid


def resume_unfinished_studies(
    home: str | os.PathLike[str], redis_url: str | None = None
) -> list[str]:
    """Start a detached coordinator for every study on the workers (not SLURM: those
    come back with ``study resume`` where they were started) neither finished nor
    cancelled whose coordinator is not running; ``spherescope up`` calls this once its
    workers are started. The ids of the studies resumed."""
    resumed = []
    for study_id in storage.list_study_ids(home):
        if storage.is_finished(home, study_id) or coordinator_running(Path(home), study_id):
            continue
        if launch_settings(home, study_id).get("slurm") is not None:
            continue
        start_detached(home, study_id, redis_url)
        resumed.append(study_id)
    return resumed


def stop_coordinators(home: str | os.PathLike[str], timeout_s: float = 10.0) -> list[str]:
    """SIGTERM the running coordinator of every unfinished study on the workers (not
    SLURM) and wait until each has let go of its study; ``spherescope up`` calls this
    when it stops, before its workers: a coordinator outliving the stack would see its
    runs stopped and launch into a broker that is gone. The next ``up`` resumes them
    (nothing is lost: a coordinator is rebuilt from the journal and the store). The ids
    of the studies stopped."""
    stopped = []
    for study_id in storage.list_study_ids(home):
        if storage.is_finished(home, study_id):
            continue
        if launch_settings(home, study_id).get("slurm") is not None:
            continue
        pid = coordinator_pid(Path(home), study_id)
        if pid is None:
            continue
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        stopped.append(study_id)
    deadline = time.monotonic() + timeout_s
    while any(coordinator_running(Path(home), s) for s in stopped):
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    return stopped


def cancel_study(home: str | os.PathLike[str], study_id: str) -> list[str]:
    """Mark the study cancelled and cancel its runs still queued or running (the
    coordinator, if alive, then fails its open trials and stops); the runs cancelled."""
    from worker.submit import cancel

    storage.check_study_id(home, study_id)
    storage.cancel_flag(home, study_id).touch()
    store = RunStore(home)
    cancelled = []
    for run in study_runs(store, study_id):
        if not run.record.is_terminal:
            cancel(run.record.run_id, store=store)
            cancelled.append(run.record.run_id)
    return cancelled


def study_state(home: str | os.PathLike[str], study_id: str) -> str:
    if storage.cancel_flag(home, study_id).exists():
        return "cancelled"
    if storage.finished_flag(home, study_id).exists():
        return "finished"
    return "running" if coordinator_running(Path(home), study_id) else "stopped"


def study_status(
    home: str | os.PathLike[str], study_id: str, run_ids: Sequence[str] | None = None
) -> dict[str, Any]:
    """Per arm: trials by state against the budget, runs in flight, reproductions
    (``run_ids``: the study's runs when the caller knows them, see ``study_runs``)."""
    from worker.study.results import study_trials

    results = study_trials(home, study_id)
    store = RunStore(home)
    runs = study_runs(store, study_id, run_ids)
    arms = {}
    for arm in results.spec.arms:
        mine = [r for r in runs if r.arm == arm.name]
        arms[arm.name] = {
            "budget": results.spec.trials,
            "trials": results.trials.get(arm.name, {}),
            "asked": sum(results.trials.get(arm.name, {}).values()),
            "runs_in_flight": sum(1 for r in mine if not r.record.is_terminal),
            "reproduction_runs": sum(1 for r in mine if r.repro is not None),
            "best": results.best.get(arm.name),
            "best_value": results.best_value.get(arm.name),
        }
    return {
        "study_id": study_id,
        "name": results.spec.name,
        "state": study_state(home, study_id),
        "metric": results.spec.metric,
        "folds": results.spec.folds,
        "reproductions": results.spec.reproductions,
        "arms": arms,
        "runs": len(runs),
    }


def status_lines(status: Mapping[str, Any]) -> str:
    lines = [
        f"study {status['study_id']} ({status['state']}): {status['metric']}, "
        f"{status['folds']} fold(s), {status['runs']} runs"
    ]
    for arm, info in status["arms"].items():
        states = ", ".join(f"{n} {s}" for s, n in sorted(info["trials"].items())) or "none"
        best = "" if info["best_value"] is None else f"; best {info['best_value']:.4f}"
        lines.append(
            f"  {arm}: {info['asked']}/{info['budget']} trials ({states}); "
            f"{info['runs_in_flight']} in flight; "
            f"{info['reproduction_runs']} reproduction runs{best}"
        )
    return "\n".join(lines)


def as_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)
