"""Submitting a run to SLURM: validate the config (as ``train`` does), check the request
against the cluster, record the run ``queued`` with its executor record, submit the job
through submitit. A refused job leaves nothing queued: its run is deleted again."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

import submitit

from db.remote import writer_store
from db.remote.store import RemoteStore
from db.scheduler_record import SLURM, write_executor
from db.store import RunStore
from db.writer_store import WriterStore
from sphere_engine.config import RunConfig
from worker.checkpoint_policy import check_checkpoint_dir
from worker.slurm.cluster import check_request
from worker.slurm.commands import SlurmError, last_line, require
from worker.slurm.job import SlurmRunJob
from worker.slurm.request import SlurmRequest

#: The executor of a job submitted through the ingest service: the stack cannot ask its
#: cluster's SLURM, so its workers neither requeue it (reconcile) nor close it from
#: squeue (``worker.slurm.states``); the job's heartbeat and the remote grace rule do.
REMOTE_SLURM = "slurm-remote"
LOG_FOLDER = "slurm"  # in the run's folder: submitit's pickles and the job's output


def submit_slurm(
    config: RunConfig | Mapping[str, Any],
    request: SlurmRequest,
    name: str | None = None,
    tags: Iterable[str] = (),
    *,
    store: WriterStore | None = None,
    project: str | None = None,
) -> str:
    """Validate, record as queued and submit one run as a SLURM job; return its id.
    ``ValueError`` (config or request, naming the field) or ``SlurmError`` (SLURM missing
    or refusing) before anything stays recorded."""
    from sphere_engine.validation import validated_config

    validated = validated_config(config)  # the one check of a submitted run
    store = store or writer_store()
    check_checkpoint_dir(validated, store.home)
    require("sbatch")
    partition = check_request(request)  # what the cluster cannot give, first
    tasks_per_node = request.tasks_per_node(validated.training.devices)
    request = request.resolved(partition.name, partition.max_time_min)
    run_id = store.create_run(validated.to_dict(), name, tags=tuple(tags), project=project)
    record = {
        "executor": SLURM,
        "job_id": None,
        "partition": partition.name,
        "limits": request.to_dict(),  # as submitted: partition and time limit filled in
        "submitted_at": time.time(),
    }
    try:  # recorded before the job exists: no broker reconciliation ever takes this run
        _record_executor(store, run_id, record)
        folder = store.run_dir(run_id) / LOG_FOLDER
        executor = submitit.SlurmExecutor(folder=folder, max_num_timeout=0)
        executor.update_parameters(
            **request.executor_parameters(partition.name, f"spherescope-{run_id}", tasks_per_node)
        )
        job = executor.submit(SlurmRunJob(str(store.home), run_id, request.time_min or 0))
        _record_executor(store, run_id, {**record, "job_id": str(job.job_id)})
    except BaseException as error:
        store.delete_run(run_id)
        if isinstance(error, Exception):
            detail = last_line(str(error)) or type(error).__name__
            raise SlurmError(f"SLURM refused the job: {detail}") from None
        raise
    return run_id


def _record_executor(store: WriterStore, run_id: str, record: dict) -> None:
    if isinstance(store, RemoteStore):  # submitit's files stay in the cluster's own folder
        store.write_executor(run_id, {**record, "executor": REMOTE_SLURM})
    elif isinstance(store, RunStore):
        write_executor(store.files, run_id, record)
    else:
        raise TypeError(f"{store!r} is neither a RunStore nor a RemoteStore")
