"""Where a run executes, as the pages say it: a SLURM run's job, partition, limits,
what SLURM says of a pending job, and its requeues (from ``RunRecord.executor`` and the
status's ``requeues``, see ``db.scheduler_record`` and ``worker.slurm``). Plain text, no widgets."""

from __future__ import annotations

from typing import Any

SLURM = "slurm"


def _get(record: Any, key: str) -> Any:
    value = record.get(key) if hasattr(record, "get") else getattr(record, key, None)
    return value if isinstance(value, dict) else {}


def is_slurm(record: Any) -> bool:
    return _get(record, "executor").get("executor") == SLURM


def runs_on(record: Any) -> str:
    """The Runs table's "runs on": ``SLURM 42 (debug)``, else "" (a worker or a process)."""
    executor = _get(record, "executor")
    if executor.get("executor") != SLURM:
        return ""
    return f"SLURM {executor.get('job_id') or '?'} ({executor.get('partition') or '?'})"


def limits_text(record: Any) -> str:
    """``30 min · 1 GPU · 1 node · 4 CPUs · 16 GB · account a · qos q · constraint c``
    (``4 GPUs per node · 2 nodes`` for a job of several nodes)."""
    limits = _get(record, "executor").get("limits") or {}
    parts = [f"{limits.get('time_min') or '?'} min"]
    gpus, nodes = limits.get("gpus") or 0, limits.get("nodes") or 1
    if gpus:
        each = " per node" if nodes > 1 else ""  # sbatch's --gpus-per-node
        parts.append(f"{gpus} GPU{'s' if gpus > 1 else ''}{each}")
    parts.append(f"{nodes} node{'s' if nodes > 1 else ''}")
    if limits.get("cpus_per_task"):
        parts.append(f"{limits['cpus_per_task']} CPUs")
    if limits.get("mem_gb"):
        parts.append(f"{limits['mem_gb']:g} GB")
    for name in ("account", "qos", "constraint"):
        if limits.get(name):
            parts.append(f"{name} {limits[name]}")
    return " · ".join(parts)


def scheduler_note(record: Any) -> str | None:
    """What SLURM says of a queued run's job (``SLURM job 42 pending: Resources``)."""
    executor = _get(record, "executor")
    status = record.get("status") if hasattr(record, "get") else getattr(record, "status", "")
    if executor.get("executor") != SLURM or status not in ("queued", "running"):
        return None
    scheduler = executor.get("scheduler") or {}
    state, reason = scheduler.get("state"), scheduler.get("reason")
    if not state or (status == "running" and state == "RUNNING"):
        return None
    shown = f"SLURM job {executor.get('job_id')} {str(state).lower()}"
    return f"{shown}: {reason}" if reason and reason != "None" else shown


def requeue_text(record: Any) -> str | None:
    """``Requeued by SLURM 2 times; resumed at steps 40, 90`` (None when never)."""
    requeues = _get(record, "extra").get("requeues") if _get(record, "extra") else None
    if not requeues:
        return None
    steps = ", ".join(str(r.get("step", "?")) for r in requeues)
    times = "once" if len(requeues) == 1 else f"{len(requeues)} times"
    return f"Requeued by SLURM {times}; resumed from the checkpoint of step {steps} as the same run"
