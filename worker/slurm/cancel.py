"""Cancelling a SLURM run. The run's cancel flag first: a running job stops at its next
step, writes its last checkpoint and ends ``cancelled``; ``scancel`` then ends the job
(a pending one never starts). A second cancel of a run still running kills the job."""

from __future__ import annotations

import contextlib

from db.records import RunRecord
from db.store import RunStore
from worker.slurm.commands import run_slurm


def cancel_slurm(record: RunRecord, store: RunStore) -> str:
    """Cancel the SLURM run ``record``; its status afterwards."""
    run_id, job = record.run_id, str(record.executor.get("job_id") or "")
    if record.is_terminal:
        return record.status
    asked_before = store.cancel_requested(run_id)
    store.request_cancel(run_id)
    if record.status == "queued" or asked_before:
        if job:
            run_slurm("scancel", job)
        with contextlib.suppress(ValueError):  # a job took it meanwhile: it sees the flag
            message = "cancelled before it started" if record.status == "queued" else ""
            store.set_status(run_id, "cancelled", message or "cancelled (job killed)")
    elif job:
        # SIGTERM to the job's steps only: the trainer stops (flag and signal), saves and
        # ends the run; the job then ends by itself, its output kept
        run_slurm("scancel", "--signal=TERM", job)
    return store.get_run(run_id).status
