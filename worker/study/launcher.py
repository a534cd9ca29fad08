"""How a study's runs are started and stopped: on the Celery workers (``worker.submit``)
or as SLURM jobs (``worker.slurm``), the same paths a single run takes."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any, Protocol

from db.store import RunStore

SLURM_REFRESH_S = 5.0


class RunLauncher(Protocol):
    def launch(self, config: Mapping[str, Any], name: str, tags: Sequence[str]) -> str: ...

    def cancel(self, run_id: str) -> None: ...

    def refresh(self) -> None:
        """Bring the store's view of the launched runs up to date (SLURM's states)."""


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


def launcher_for(store: RunStore, study_id: str, slurm: Mapping[str, Any] | None) -> RunLauncher:
    return (
        SlurmLauncher(store, study_id, slurm)
        if slurm is not None
        else WorkerLauncher(store, study_id)
    )


def slurm_request_dict(request: Any) -> dict[str, Any] | None:
    """A ``SlurmRequest`` as the plain dict the study folder keeps (None: workers)."""
    return None if request is None else asdict(request)
