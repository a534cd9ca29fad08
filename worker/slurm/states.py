"""SLURM's word on the SLURM runs of a store: the state and reason of each one's job
(``squeue``; ``sacct`` for jobs squeue has forgotten, from the accounting storage or
the job-completion log), written
to ``scheduler.json``, and the runs whose job ended without ending them closed with
SLURM's reason. Called by the reaper before the heartbeat rule, which spares the runs
whose job SLURM still holds (a pending or requeued job has no heartbeat)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from db.records import RunRecord
from db.scheduler_record import SLURM, write_scheduler_state
from db.store import RunStore
from worker.slurm.commands import SlurmError, run_slurm

log = logging.getLogger(__name__)

#: job states in which the run is, or will be again, alive
ALIVE = frozenset(
    {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "REQUEUED", "REQUEUE_HOLD",
     "REQUEUE_FED", "RESIZING", "SUSPENDED", "STOPPED", "SIGNALING", "STAGE_OUT",
     "RESV_DEL_HOLD", "SPECIAL_EXIT"}
)  # fmt: skip
#: job end states → (the run's status, message) when the job did not record its own end
ENDED = {
    "NODE_FAIL": ("lost", "SLURM: the node of job {job} failed{why}"),
    "BOOT_FAIL": ("lost", "SLURM: the node of job {job} failed to boot{why}"),
    "CANCELLED": ("cancelled", "SLURM job {job} was cancelled"),  # its reason: the last wait
    "TIMEOUT": ("failed", "SLURM time limit ({minutes} min) reached"),
    "DEADLINE": ("failed", "SLURM job {job} reached its deadline"),
    "OUT_OF_MEMORY": ("failed", "SLURM job {job} ran out of memory"),
    "FAILED": ("failed", "SLURM job {job} failed{why}"),
    "PREEMPTED": ("lost", "SLURM preempted job {job} without requeueing it{why}"),
    "COMPLETED": ("lost", "SLURM job {job} completed without ending the run"),
}


@dataclass(frozen=True)
class JobState:
    state: str
    reason: str = ""


def _parse(output: str) -> dict[str, JobState]:
    states = {}
    for line in output.splitlines():
        job, _, rest = line.strip().partition("|")
        state, _, reason = rest.partition("|")
        if job and "." not in job:  # steps (123.batch) are not the job
            states[job] = JobState(state.split()[0] if state else "", reason.strip())
    return states


def job_states(job_ids: list[str]) -> dict[str, JobState]:
    """State and reason of each job SLURM knows, by job id."""
    if not job_ids:
        return {}
    listed = ",".join(job_ids)
    try:
        states = _parse(run_slurm("squeue", "-h", "-t", "all", "-j", listed, "-o", "%i|%T|%r"))
    except SlurmError as error:  # an id squeue forgot makes it fail: ask for each one
        if "Invalid job id" not in str(error):
            raise  # SLURM unreachable: nothing is known, nothing may be closed
        states = {}
        if len(job_ids) > 1:
            for job in job_ids:
                states.update(job_states([job]))
            return states
    missing = [job for job in job_ids if job not in states]
    if missing:
        states.update(accounting_states(missing))
    return states


#: sacct's sources: the accounting storage (slurmdbd), else the job-completion log
#: (``JobCompType=jobcomp/filetxt``, ``sacct -c``), which lists every ended attempt of a
#: job (a requeued one more than once; the last line is its latest)
SACCT_SOURCES = (("-X",), ("-c",))


def accounting_states(job_ids: list[str]) -> dict[str, JobState]:
    """What ``sacct`` remembers of jobs squeue forgot ({} where the cluster keeps neither
    accounting nor a job-completion log)."""
    listed = ",".join(job_ids)
    for source in SACCT_SOURCES:
        try:
            output = run_slurm(
                "sacct", "-n", "-P", *source, "-j", listed, "-o", "JobID,State,Reason"
            )
        except SlurmError:  # "Slurm accounting storage is disabled", or no jobcomp log
            continue
        return _parse(output)
    return {}


def slurm_runs(store: RunStore) -> list[RunRecord]:
    """Runs submitted to SLURM that have not ended (a lost one may still come back)."""
    records = store.list_runs(status=["queued", "running", "lost"])
    return [r for r in records if r.executor.get("executor") == SLURM and r.executor.get("job_id")]


def refresh_slurm_runs(store: RunStore) -> set[str]:
    """Record SLURM's state of every open SLURM run; close those whose job ended without
    ending them; the ids of runs whose job SLURM still holds (spared by the reaper)."""
    records = slurm_runs(store)
    if not records:
        return set()
    try:
        states = job_states([str(r.executor["job_id"]) for r in records])
    except SlurmError as error:  # SLURM unreachable: spare them all, say why once
        log.warning("SLURM runs not checked: %s", error)
        return {r.run_id for r in records if r.status != "lost"}
    alive, requeued = set(), []
    for record in records:
        job = str(record.executor["job_id"])
        state = states.get(job)
        if state is None:
            if record.status == "queued":
                _close(store, record, "lost", f"SLURM no longer knows job {job}")
            continue  # running: the heartbeat rule decides
        write_scheduler_state(store.files, record.run_id, state.state, state.reason)
        if state.state == "PENDING" and record.status == "running":
            requeued.append(record)  # pending again while its run ran: why did it stop?
        elif state.state in ALIVE:
            alive.add(record.run_id)
        elif state.state in ENDED and record.status != "lost":
            _close_as_ended(store, record, state)
    return alive | _requeued_alive(store, requeued)


def _close_as_ended(store: RunStore, record: RunRecord, state: JobState) -> None:
    status, template = ENDED[state.state]
    minutes = record.executor.get("limits", {}).get("time_min", "?")
    why = f" ({state.reason})" if state.reason not in ("", "None") else ""
    message = template.format(job=record.executor["job_id"], why=why, minutes=minutes)
    _close(store, record, status, message)


def _requeued_alive(store: RunStore, records: list[RunRecord]) -> set[str]:
    """Runs whose job SLURM requeued: alive (they resume when it starts again), but for
    those whose last attempt a node failure ended (sacct says NODE_FAIL: the job died
    with its node, no process of it recorded the end), which end ``lost`` with it."""
    if not records:
        return set()
    attempts = accounting_states([str(r.executor["job_id"]) for r in records])
    alive = set()
    for record in records:
        last = attempts.get(str(record.executor["job_id"]))
        if last is not None and last.state == "NODE_FAIL":
            _close_as_ended(store, record, last)
        else:
            alive.add(record.run_id)
    return alive


def _close(store: RunStore, record: RunRecord, status: str, message: str) -> None:
    fresh = store.get_run(record.run_id)  # the job may have ended it meanwhile
    if fresh.status != record.status:
        return
    try:
        store.set_status(record.run_id, status, message)
    except ValueError:
        return
    log.warning("run %s %s: %s", record.run_id, status, message)
