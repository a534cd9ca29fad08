"""A ``Run``'s part in a data-parallel job: what one rank does beside its own logging.

Rank 0 creates the run (or continues it, on an elastic restart) and is the only rank
that touches the store; every rank learns the run's id from it. With ``scope="global"``
scalars can be reduced and evaluation sets gathered over the ranks; the job's side
channel (``spherescope._job.JobLink``) lets rank 0 end the run ``failed`` when another
rank dies. In a single process every method here is a no-op or the identity, so the
``Run`` reads the same either way.
"""

from __future__ import annotations

import atexit
from collections.abc import Callable, Mapping
from typing import Any

from db.lifecycle import RunLifecycle
from db.writer_store import WriterStore
from sphere_engine.distributed import (
    DistributedContext,
    broadcast_object,
    gather_union,
    reduce_values,
)
from spherescope._job import (
    RECORD_KEY,
    JobLink,
    RankFailed,
    elastic_run,
    job_record,
    on_sigterm,
    resume,
)

SCOPES = ("global", "rank0")  # statistics of the global batch, or of rank 0's own
REDUCTIONS = ("mean", "sum", "max")


class RankJob:
    """One rank's view of the job (``context``) a run belongs to."""

    def __init__(self, context: DistributedContext, scope: str, launcher: str | None) -> None:
        if scope not in SCOPES:
            raise ValueError(f"scope must be one of {', '.join(SCOPES)}, got {scope!r}")
        self.context, self.scope, self.launcher = context, scope, launcher
        # statistics of the global batch (collective calls), or of each rank's own
        self.talks = context.is_distributed and scope == "global"
        self.resumed_step: int | None = None  # an elastic restart: the run's last step
        self.peer_failure: str | None = None  # set by rank 0's watcher
        self._link: JobLink | None = None
        self._undo_sigterm: Callable[[], None] = lambda: None
        self._at_exit: Callable[[], None] | None = None

    # -- starting ------------------------------------------------------------------------
    def record_in(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """The run's config with how the job logs (world size, scope, launcher)."""
        if not self.context.is_distributed:
            return dict(config)
        return {**config, RECORD_KEY: job_record(self.context, self.scope, self.launcher)}

    def create_run(
        self,
        store: WriterStore,
        config: Mapping[str, Any],
        name: str | None,
        tags: Any,
        project: str | None = None,
    ) -> str:
        """Rank 0: a new run's id, or the unfinished run an earlier attempt of this
        elastic job started (made startable again; ``resumed_step`` its last step)."""
        earlier = elastic_run(store) if self.context.is_distributed else None
        if earlier is not None:
            resume(store, earlier)
            self.resumed_step = earlier.progress_step
            return earlier.run_id
        return store.create_run(
            config, name, kind="external", tags=tags, status="running", project=project
        )

    def start(self, start: Callable[[], RunLifecycle]) -> tuple[RunLifecycle | None, str]:
        """Rank 0 calls ``start``; every rank gets the run's id (rank 0's failure to
        start is raised on every rank). Returns rank 0's lifecycle (None elsewhere)."""
        lifecycle, run_id, problem = None, "", ""
        distributed = self.context.is_distributed
        if self.context.is_main:
            try:
                lifecycle = start()
                run_id = lifecycle.run_id
            except Exception as error:
                if distributed:  # the other ranks wait for the id: tell them why not
                    broadcast_object(("", None, f"{type(error).__name__}: {error}"), self.context)
                raise
        if distributed:
            run_id, self.resumed_step, problem = broadcast_object(
                (run_id, self.resumed_step, problem), self.context
            )
            if problem:
                raise RuntimeError(f"spherescope: rank 0 could not start the run ({problem})")
        return lifecycle, run_id

    def watch(
        self,
        run_id: str,
        interval_s: float,
        on_peer_failure: Callable[[str], None],
        at_exit: Callable[[], None],
    ) -> None:
        """Open the job's side channel: every rank beats, rank 0 watches the others and
        turns a SIGTERM into ``RankFailed``; ``at_exit`` runs if the process exits with
        the run open."""
        if not self.context.is_distributed:
            return

        def failed(message: str) -> None:
            self.peer_failure = message
            on_peer_failure(message)

        self._link = JobLink(self.context, run_id, interval_s)
        self._link.start(failed)
        if self.context.is_main:
            self._undo_sigterm = on_sigterm(self._link)
        self._at_exit = at_exit
        atexit.register(at_exit)

    # -- while it runs -------------------------------------------------------------------
    def check(self) -> None:
        """Raise ``RankFailed`` once another rank failed (rank 0)."""
        if self.peer_failure is not None:
            raise RankFailed(self.peer_failure)

    def reduce(self, values: dict[str, float], reduce: str | None) -> dict[str, float]:
        """``values`` reduced over the ranks (collective), or rank 0's own."""
        if reduce is None:
            return values
        if self.talks:
            return reduce_values(values, reduce, self.context)
        if reduce not in REDUCTIONS:
            raise ValueError(f"reduce must be one of {', '.join(REDUCTIONS)}, got {reduce!r}")
        return values

    def gather_evaluation(
        self,
        embeddings: Any,
        labels: Any,
        sample_ids: Any,
        dataset_size: int | None,
        shard_block: int,
    ) -> tuple[Any, Any, Any]:
        """Every rank's shard, gathered (collective) with the padding duplicates
        dropped, and the kept rows' sample ids (None without them); the shard itself
        when the ranks do not talk."""
        if not self.talks:
            return embeddings, labels, sample_ids
        union = gather_union(
            _tensor(embeddings, "embeddings"),
            _tensor(labels, "labels"),
            self.context,
            sample_ids=None if sample_ids is None else _tensor(sample_ids, "sample_ids"),
            dataset_size=dataset_size,
            block=shard_block,
        )
        return union.embeddings, union.labels, union.sample_ids

    def share(self, metrics: dict[str, float]) -> dict[str, float]:
        """Rank 0's metrics on every rank (collective when the ranks talk)."""
        return broadcast_object(metrics, self.context) if self.talks else metrics

    # -- ending --------------------------------------------------------------------------
    @property
    def stopping(self) -> bool:
        """The side channel is being stopped (the run is ending)."""
        return self._link is not None and self._link.stopping

    def leave(self, failure: str | None) -> None:
        """A rank other than 0 is done (``failure``: why it failed, told to rank 0)."""
        if self._link is not None and failure is not None:
            self._link.report_failure(failure)
        self.close()

    def close(self) -> None:
        """Stop the side channel (waiting for its thread) and the exit/SIGTERM hooks
        (idempotent)."""
        self._undo_sigterm()
        if self._link is not None:
            self._link.stop()
        if self._at_exit is not None:
            atexit.unregister(self._at_exit)


def _tensor(values: Any, name: str) -> Any:
    import torch

    if isinstance(values, torch.Tensor):
        return values
    try:
        return torch.as_tensor(values)
    except Exception as error:
        raise ValueError(f"{name} must be an array or tensor ({error})") from None
