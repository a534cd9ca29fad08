"""``Run``: one training run of the user's own code, recorded in the SphereScope store."""

from __future__ import annotations

import contextlib
import numbers
import threading
import warnings
from collections.abc import Mapping
from types import TracebackType
from typing import Any

from db.heartbeat import heartbeat_interval
from db.lifecycle import RunLifecycle
from db.records import TERMINAL
from db.writer_store import WriterStore
from sphere_engine.distributed import DistributedContext, single_process
from spherescope._evaluation import record_evaluation
from spherescope._job import RankFailed
from spherescope._outbox import Outbox
from spherescope._rank_job import RankJob
from spherescope._values import count, host_array, image_array, number, similarities
from spherescope._writer import SafeWriter


class Run:
    """Logs scalars, per-step embedding diagnostics and evaluations of one run.

    Create it with ``spherescope.init``. Use it as a context manager: leaving the block
    normally ends the run ``finished``; an exception ends it ``failed`` (with the
    exception's message) and propagates.

    In a data-parallel job every rank holds a ``Run`` of the same id; rank 0's writes
    the store. With ``scope="global"`` every rank must call ``log_embeddings`` and
    ``evaluate`` on the same steps (they are collective); ``log`` is collective only
    with ``reduce``. With ``scope="rank0"`` nothing is communicated after ``init`` and
    the other ranks' calls record nothing.
    """

    def __init__(
        self,
        store: WriterStore | None,
        *,
        name: str | None,
        config: Mapping[str, Any],
        tags: Any,
        log_every: int,
        tracked: Any,
        strict: bool,
        context: DistributedContext | None = None,
        scope: str = "global",
        launcher: str | None = None,
        project: str | None = None,
    ) -> None:
        from sphere_engine.diagnostics.external_step import ExternalStep

        self.context = context or single_process()
        self.scope = scope
        # the run's part in a data-parallel job (nothing to do in a single process)
        self._job = RankJob(self.context, scope, launcher)
        steps_context = self.context if self._job.talks else single_process()
        self._steps = ExternalStep(log_every=log_every, tracked=tracked, context=steps_context)
        self.store = store
        self.strict = strict
        self.ended = False
        self.step: int | None = None  # the latest step seen, sent with the heartbeat
        self._ending = threading.Lock()  # rank 0: the main thread or the job's watcher
        self._device_noted = False  # the device is recorded once, from the first batch
        config = self._job.record_in(config)
        self._lifecycle, self._run_id = self._job.start(
            lambda: self._start(config, name, tags, project)
        )
        if self._lifecycle is not None:
            self._writer = SafeWriter(self._lifecycle, strict=strict)
            # store writes run on a writer thread (strict: inline, so a failure raises
            # at its call); the user's thread collects them in the outbox between
            # hand-overs
            self._outbox = Outbox(self._writer, self._steps, background=not strict)
        self._job.watch(self._run_id, heartbeat_interval(), self._on_peer_failure, self._at_exit)

    @property
    def id(self) -> str:
        return self._run_id

    @property
    def rank(self) -> int:
        return self.context.rank

    @property
    def world_size(self) -> int:
        return self.context.world_size

    @property
    def resumed_step(self) -> int | None:
        """On an elastic restart, the last step the run had reached; else None."""
        return self._job.resumed_step

    def __repr__(self) -> str:
        if self.store is None:
            return f"Run({self.id!r}, rank={self.rank})"
        return f"Run({self.id!r}, home={str(self.store.home)!r})"

    # -- logging ---------------------------------------------------------------------
    def log(self, values: Mapping[str, Any], step: int, reduce: str | None = None) -> None:
        """Scalars at ``step`` (numbers or 0-dim tensors), e.g. ``{"loss/total": 0.3}``.
        In a data-parallel job rank 0's values are recorded; ``reduce="mean"``, ``"sum"``
        or ``"max"`` records them reduced over all ranks (then every rank must call it)."""
        if type(values) is not dict and not isinstance(values, Mapping):
            raise ValueError(
                f"values must be a dict of name -> number, got {type(values).__name__}"
            )
        plain = {}
        for name, value in values.items():
            if not isinstance(name, str) or not name:
                raise ValueError(f"metric names must be non-empty strings, got {name!r}")
            plain[name] = number(name, value)
        self._note_step(step)
        plain = self._job.reduce(plain, reduce)
        if self._lifecycle is None:  # another rank: rank 0 records
            return
        self._outbox.post_scalars(plain, int(step))
        self._outbox.deliver()

    def log_mining(
        self,
        active: Any,
        candidates: Any,
        step: int,
        hardest_neg_sim: Any = None,
        positive_sims: Any = None,
        negative_sims: Any = None,
    ) -> None:
        """What the miner of a pair loss did at ``step``, as SphereScope's own losses log
        it: ``active`` pairs / triplets the loss learnt from (non-zero loss, or kept by
        the miner) out of ``candidates`` valid ones, each a count or a boolean mask
        (array or tensor) → ``mining/active_fraction``; ``hardest_neg_sim``: the mean
        cosine of each anchor's most similar negative. A run at 0 for long gets the
        "dead loss" finding. ``positive_sims`` / ``negative_sims``: the batch's positive
        and negative pair cosines (any shape, array or tensor) → their distributions
        over steps (``mining/pos_sim_hist/<bin>``, ``mining/neg_sim_hist/<bin>``)."""
        counts = [
            count(name, value) for name, value in (("active", active), ("candidates", candidates))
        ]
        if counts[1] <= 0 or not 0 <= counts[0] <= counts[1]:
            raise ValueError(
                f"log_mining: active ({counts[0]:g}) must be between 0 and candidates "
                f"({counts[1]:g}), and candidates above 0"
            )
        values = {"mining/active_fraction": counts[0] / counts[1]}
        if hardest_neg_sim is not None:
            values["mining/hardest_neg_sim"] = hardest_neg_sim
        if positive_sims is not None or negative_sims is not None:
            from sphere_engine.diagnostics.similarity_histogram import similarity_fractions

            values |= similarity_fractions(
                similarities("positive_sims", positive_sims),
                similarities("negative_sims", negative_sims),
            )
        self.log(values, step)

    def log_samples(self, sample_ids: Any, images: Any) -> None:
        """Images of samples, shown for their ids in the retrieval explorer's strips:
        ``sample_ids`` (n integers, the ids ``evaluate`` was given) and ``images``
        uint8 (n × h × w, n × h × w × C with C 1 or 3, or a tensor n × C × h × w), at
        most 256 pixels a side; stored as small PNGs. Rank 0's call writes them."""
        from db.thumbnails import checked_images

        ids, pixels = checked_images(host_array(sample_ids), image_array(images), "log_samples")
        if self._lifecycle is None:
            return
        self._outbox.post_samples(ids, pixels)
        self._outbox.deliver()

    def log_embeddings(
        self, embeddings: Any, labels: Any, step: int, sample_ids: Any = None
    ) -> None:
        """The per-step geometry diagnostics of a batch of raw (un-normalised) N × d
        embeddings, as SphereScope's own training loop logs them. When ``embeddings``
        requires a gradient, the gradient statistics are added when ``backward`` runs.

        In a data-parallel job (``scope="global"``) it is collective on the logged steps:
        the global batch is gathered (and its gradients, during ``backward``)."""
        self._note_step(step)
        if self._lifecycle is None and not self._job.talks:  # scope="rank0": rank 0's batch
            return
        if self._lifecycle is not None:
            self._outbox.deliver()
        self._steps.observe(embeddings, labels, step, sample_ids)
        if self._lifecycle is not None and not self._device_noted:
            # what the dashboard shows as the run's device (the SDK never picks one)
            self._device_noted = True
            info = {"device": str(embeddings.device)}
            self._outbox.post_run_info(info)

    def evaluate(
        self,
        embeddings: Any,
        labels: Any,
        step: int,
        reference: Any = None,
        reference_labels: Any = None,
        vertices: Any = None,
        snapshot_size: int = 2000,
        sample_ids: Any = None,
        dataset_size: int | None = None,
        shard_block: int = 1,
    ) -> dict[str, float]:
        """Evaluate held-out embeddings as a training run's evaluation does (retrieval,
        clustering, angular separation, vertex alignment given ``vertices``) and keep a
        snapshot for the Geometry page. Returns the metrics.

        In a data-parallel job (``scope="global"``) each rank passes its shard: they are
        gathered and evaluated once, on rank 0, and every rank gets the metrics. The
        duplicates ``DistributedSampler`` pads shards with are dropped by ``sample_ids``
        (each id kept once, ordered by id), else by ``dataset_size`` (the data set's
        length; ``shard_block``: samples dealt to a rank at a time, 1 for
        ``DistributedSampler``, the per-device batch size for Accelerate's batch
        sharding); shards may be uneven."""
        self._note_step(step)
        if self._lifecycle is None and not self._job.talks:  # scope="rank0": rank 0's shard
            return {}
        embeddings, labels, sample_ids = self._job.gather_evaluation(
            embeddings, labels, sample_ids, dataset_size, shard_block
        )
        metrics: dict[str, float] = {}
        if self._lifecycle is not None:
            metrics = record_evaluation(
                self._outbox,
                embeddings,
                labels,
                step,
                reference=reference,
                reference_labels=reference_labels,
                vertices=vertices,
                snapshot_size=snapshot_size,
                sample_ids=sample_ids,
            )
        return self._job.share(metrics)

    # -- ending ------------------------------------------------------------------------
    def finish(self, status: str = "finished", message: str = "") -> None:
        """Flush everything and end the run (``finished``, ``failed`` or ``cancelled``).
        In a data-parallel job rank 0 ends the run; another rank that finishes ``failed``
        tells rank 0, which ends the run ``failed`` naming it."""
        if self.ended:
            return
        if status not in TERMINAL or status == "lost":
            raise ValueError(f"status must be finished, failed or cancelled, got {status!r}")
        if self._lifecycle is None:
            self._leave_job(f"{message or 'failed'}" if status == "failed" else None)
            return
        with self._ending:
            if self.ended:  # the job's watcher ended it (another rank failed)
                return
            self._outbox.deliver(force=True)
            self._outbox.close()  # everything handed over is written (or contained)
            try:
                self._writer.final_flush()  # raises only when strict
            except BaseException as error:
                self._end(error=error)
                raise
            self._lifecycle.end(status, message, **self._writer.problem())
            self._end()

    def __enter__(self) -> Run:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc is None:
            self.finish()
        elif self._lifecycle is None:  # another rank: rank 0 records which and why
            self._leave_job(f"{type(exc).__name__}: {exc}")
        else:
            self._fail(exc)

    def _fail(self, error: BaseException) -> None:
        """End the run failed (or cancelled) with ``error``, keeping what was logged."""
        with self._ending:
            self._fail_ending(error)

    def _fail_ending(self, error: BaseException) -> None:
        """``_fail`` with ``_ending`` held."""
        if self.ended:
            return
        with contextlib.suppress(Exception):  # the run's own error is what matters
            self._outbox.deliver(force=True)
            self._outbox.close()
            self._writer.final_flush()
        self._end(error=error)

    # -- the data-parallel job ---------------------------------------------------------
    def _on_peer_failure(self, message: str) -> None:
        """Rank 0's job watcher: another rank failed or went silent; end the run now
        (the main thread may be blocked in a collective with that rank). A main thread
        that is ending the run itself holds ``_ending`` and, once it has stopped the side
        channel, waits for this thread: then the run is left to it."""
        while not self._ending.acquire(timeout=0.05):
            if self._job.stopping:
                return
        try:
            self._fail_ending(RankFailed(message))
        finally:
            self._ending.release()

    def _leave_job(self, failure: str | None) -> None:
        """A rank other than 0 is done (``failure``: why it failed, told to rank 0)."""
        self.ended = True
        self._job.leave(failure)

    def _at_exit(self) -> None:
        """The process exits with the run still open (an uncaught error, or no
        ``finish``): never leave it running."""
        if self.ended:
            return
        reason = "the process exited without finishing the run (an uncaught error?)"
        if self._lifecycle is None:
            self._leave_job(reason)
        else:
            self._fail(RankFailed(f"rank 0: {reason}"))

    # -- internals -----------------------------------------------------------------------
    def _note_step(self, step: Any) -> None:
        self._job.check()
        if self.ended:
            raise ValueError(f"run {self.id} has ended; start a new one with spherescope.init")
        if type(step) is int and step >= 0:  # the common case, without the ABC checks
            self.step = step
            return
        if not isinstance(step, numbers.Integral) or isinstance(step, bool) or step < 0:
            raise ValueError(f"step must be an integer >= 0, got {step!r}")
        self.step = int(step)

    # The run's lifecycle (db.lifecycle, shared with the worker and the CLI): these two
    # methods are the only places that change its status or heartbeat.
    def _start(
        self, config: Mapping[str, Any], name: str | None, tags: Any, project: str | None
    ) -> RunLifecycle:
        assert self.store is not None  # rank 0
        run_id = self._job.create_run(self.store, config, name, tags, project)
        lifecycle = RunLifecycle(
            self.store,
            run_id,
            heartbeat_s=heartbeat_interval(),
            accept_running=True,
            heartbeat_store=_ProgressBeat(self),
        )
        return lifecycle.start()

    def _end(self, error: BaseException | None = None) -> None:
        """Stop the heartbeat and write the outcome (``error``: failed or cancelled)."""
        self.ended = True
        self._job.close()
        assert self._lifecycle is not None
        with contextlib.suppress(Exception):  # normally closed already; never twice
            self._outbox.close()
        if self.step is not None:
            # the last step, whether or not a heartbeat came after it (a short run ends
            # within one interval); a full disk is recorded by the end below
            with contextlib.suppress(OSError):
                _ProgressBeat(self).heartbeat(self.id)
        try:
            self._lifecycle.finish(error)
        except Exception as late:
            if self.strict:
                raise
            warnings.warn(
                f"spherescope: run {self.id}: could not record its end ({late})",
                RuntimeWarning,
                stacklevel=3,
            )


class _ProgressBeat:
    """What the lifecycle's heartbeat thread beats through: adds the run's latest step."""

    def __init__(self, run: Run) -> None:
        self.run = run

    def heartbeat(self, run_id: str, step: int | None = None, total: int | None = None) -> None:
        assert self.run.store is not None
        self.run.store.heartbeat(run_id, self.run.step if step is None else step, total)
