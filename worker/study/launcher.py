"""How a study's runs are started and stopped: on the Celery workers (``worker.submit``)
or as SLURM jobs (``worker.slurm``), the same paths a single run takes; and where a
reproduction's concatenated evaluation is computed (``concatenated.py``)."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any, Protocol

from db.store import RunStore

log = logging.getLogger(__name__)

SLURM_REFRESH_S = 5.0


class RunLauncher(Protocol):
    def launch(self, config: Mapping[str, Any], name: str, tags: Sequence[str]) -> str: ...

    def cancel(self, run_id: str) -> None: ...

    def refresh(self) -> None:
        """Bring the store's view of the launched runs up to date (SLURM's states)."""

    def evaluate_concatenated(self, arm: str, repro: int, run_ids: list[str]) -> None:
        """Start the reproduction's concatenated evaluation; it writes its file when it
        ends (``concatenated.ended``)."""


class WorkerLauncher:
    """Runs queued for the Celery workers; ``sweep_id`` groups them on the Runs page."""

    def __init__(self, store: RunStore, study_id: str) -> None:
        self.store, self.study_id = store, study_id

    def launch(self, config: Mapping[str, Any], name: str, tags: Sequence[str]) -> str:
        from worker.submit import launch

        # check_spec checked every config the study can launch when it was created
        return launch(config, name, tags, sweep_id=self.study_id, store=self.store, prechecked=True)

    def cancel(self, run_id: str) -> None:
        from worker.submit import cancel

        cancel(run_id, store=self.store)

    def refresh(self) -> None:
        return None

    def evaluate_concatenated(self, arm: str, repro: int, run_ids: list[str]) -> None:
        """A task on the queue the reproduction trained on: a warm pool process there has
        torch imported already (the coordinator never imports it). A broker that refuses
        the task leaves the evaluation to this process, as a SLURM study does it."""
        from sphere_engine.config import RunConfig
        from worker import routing
        from worker.celery_app import broker_url
        from worker.tasks import concatenated_evaluation

        try:
            config = RunConfig.from_dict(self.store.get_run(run_ids[0]).config)
            queue = routing.queue_for(config, routing.redis_client(broker_url()))
            concatenated_evaluation.apply_async((self.study_id, arm, repro, run_ids), queue=queue)
        except Exception as error:  # any failure to enqueue: computed here
            log.warning("study %s: concatenated evaluation not enqueued (%s); computing it here",
                        self.study_id, error)  # fmt: skip
            evaluate_here(self.store, self.study_id, arm, repro, run_ids)


class SlurmLauncher(WorkerLauncher):
    """Each run one SLURM job (submitit), as ``spherescope submit --slurm`` submits it."""

    def __init__(self, store: RunStore, study_id: str, request: Mapping[str, Any]) -> None:
        super().__init__(store, study_id)
        self.request = dict(request)
        self.refreshed_at = 0.0

    def launch(self, config: Mapping[str, Any], name: str, tags: Sequence[str]) -> str:
        from worker.submit import submit_to_slurm

        return submit_to_slurm(config, self.request, name, tags, store=self.store)

    def refresh(self) -> None:
        from worker.submit import refresh_slurm_states

        now = time.monotonic()
        if now - self.refreshed_at >= SLURM_REFRESH_S:  # squeue / sacct: not every poll
            self.refreshed_at = now
            refresh_slurm_states(self.store)

    def evaluate_concatenated(self, arm: str, repro: int, run_ids: list[str]) -> None:
        """No worker to hand it to: computed in this process (it imports torch)."""
        evaluate_here(self.store, self.study_id, arm, repro, run_ids)


def evaluate_here(store: RunStore, study_id: str, arm: str, repro: int, run_ids: list[str]) -> None:
    """The concatenated evaluation in this process (the coordinator's: it imports torch)."""
    from worker.study.concatenated import evaluate_and_keep

    evaluate_and_keep(store.home, study_id, arm, repro, run_ids, store)


def launcher_for(store: RunStore, study_id: str, slurm: Mapping[str, Any] | None) -> RunLauncher:
    return (
        SlurmLauncher(store, study_id, slurm)
        if slurm is not None
        else WorkerLauncher(store, study_id)
    )


def slurm_request_dict(request: Any) -> dict[str, Any] | None:
    """A ``SlurmRequest`` as the plain dict the study folder keeps (None: workers)."""
    return None if request is None else asdict(request)
