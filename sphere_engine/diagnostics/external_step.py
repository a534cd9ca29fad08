"""Per-step diagnostics for embeddings produced by someone else's training loop.

The SDK (``spherescope``) hands each logged batch of raw embeddings here. The
statistics are the engine's own (``sphere_engine.diagnostics``, the same functions the
training loop calls). When the embeddings require a gradient, a tensor hook computes
the gradient statistics while the user's ``backward`` runs; the step is then complete.
Completed steps start their move to the host, once per logged step, in
``drain_unfinished`` (the SDK calls it on its next entry): a non-blocking copy that
nobody waits for on the user's thread, so neither the hook nor the next step forces a
device sync. They wait in a ``PendingStatistics`` and are handed over K steps at once
(when due, or when asked to finish), unfinished: the SDK's writer thread waits for
their copies and finishes them.

In a data-parallel job (``context``) every rank calls ``observe`` on the same steps:
the logged steps' embeddings, labels and sample ids are gathered into the global
batch (``sphere_engine.distributed``), and in the backward pass the gradients too,
divided by the world size as DistributedDataParallel averages them, so the statistics
equal those of the global batch on one process with the loss averaged over it. Only
rank 0 computes statistics; the other ranks only send.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from sphere_engine.diagnostics.batch_statistics import (
    batch_statistics,
    embedding_statistics,
    gradient_statistics,
)
from sphere_engine.diagnostics.batched_finish import PendingStatistics, WaitingStep
from sphere_engine.diagnostics.direction_tracker import DirectionTracker
from sphere_engine.diagnostics.step_transfer import StepStatistics, reduces_on_host
from sphere_engine.distributed import (
    DistributedContext,
    gather_batch,
    gather_rows,
    single_process,
)

__all__ = ["ExternalStep"]

TrackedForward = tuple[torch.Tensor, Callable[[torch.Tensor], torch.Tensor]]


@dataclass
class _Pending:
    step: int
    stats: StepStatistics | None  # None on the ranks that only send
    sizes: list[int] = field(default_factory=list)  # rows per rank (a distributed step)
    sample_ids: list[int] = field(default_factory=list)
    embeddings: torch.Tensor | None = None  # detached float copy, kept for the hook
    norms: torch.Tensor | None = None  # their norms (None when reduced on the host)
    labels: torch.Tensor | None = None  # kept for the hook when reduced on the host
    waiting_for_grad: bool = False


class ExternalStep:
    """Diagnostics of a user's training step, every ``log_every`` steps.

    ``tracked``: ``(inputs, forward_fn)`` — the SDK embeds ``inputs`` with
    ``forward_fn`` under ``no_grad`` each logged step (ids 0..M−1) — or a sequence of
    sample ids, whose norms are taken from the batches that contain them (pass
    ``sample_ids`` to ``observe``); direction updates need every tracked id in the batch.
    ``context``: this rank of a data-parallel job (default: one process); ``observe``
    is then collective on logged steps.
    """

    def __init__(
        self,
        log_every: int = 1,
        tracked: TrackedForward | Sequence[int] | None = None,
        context: DistributedContext | None = None,
    ):
        if not isinstance(log_every, int) or log_every < 1:
            raise ValueError(f"log_every must be an integer >= 1, got {log_every!r}")
        self.log_every = log_every
        self.tracked_forward: TrackedForward | None = None
        self.tracked_ids: np.ndarray = np.zeros(0, dtype=np.int64)
        if tracked is not None:
            if isinstance(tracked, tuple) and len(tracked) == 2 and callable(tracked[1]):
                inputs, _ = tracked
                if not isinstance(inputs, torch.Tensor) or inputs.ndim < 1 or not len(inputs):
                    raise ValueError("tracked: inputs must be a non-empty tensor (M × ...)")
                self.tracked_forward = tracked
                self.tracked_ids = np.arange(len(inputs), dtype=np.int64)
            else:
                ids = np.asarray(tracked)
                if ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer):
                    raise ValueError(
                        "tracked must be (inputs, forward_fn) or a 1-D sequence of sample ids"
                    )
                self.tracked_ids = np.unique(ids.astype(np.int64))
        self.context = context or single_process()
        self.directions = DirectionTracker()
        self._pending: list[_Pending] = []
        self._unfinished = PendingStatistics()  # on the host, awaiting the batched finish

    def should_log(self, step: int) -> bool:
        return step % self.log_every == 0

    def observe(
        self,
        embeddings: torch.Tensor,
        labels: Any,
        step: int,
        sample_ids: Any = None,
    ) -> bool:
        """Compute the step's statistics (no host transfer); False if not a logged step."""
        if not isinstance(embeddings, torch.Tensor) or embeddings.ndim != 2:
            shape = getattr(embeddings, "shape", embeddings)
            raise ValueError(f"embeddings must be an N × d tensor, got {shape!r}")
        labels = torch.as_tensor(labels, device=embeddings.device).reshape(-1).long()
        if labels.shape[0] != embeddings.shape[0]:
            raise ValueError(
                f"labels must have one entry per embedding ({embeddings.shape[0]}), "
                f"got {labels.shape[0]}"
            )
        if not self.should_log(step):
            return False
        self._close_waiting()  # a previous step whose backward never ran: log it without
        sizes: list[int] = []
        if self.context.is_distributed:
            ids = None if sample_ids is None else torch.as_tensor(sample_ids).reshape(-1)
            batch = gather_batch(embeddings, labels, self.context, ids)
            if not self.context.is_main:
                self._send_only(embeddings, step, batch.sizes)
                return True
            detached, labels, sample_ids, sizes = (
                batch.embeddings,
                batch.labels,
                batch.sample_ids,
                batch.sizes,
            )
        else:
            detached = _snapshot(embeddings)
        stats = StepStatistics()
        with torch.no_grad():
            packed, norms = embedding_statistics(detached, labels, None)
            stats.add(packed)
        pending = _Pending(step, stats, sizes, [])
        self._add_tracked(pending, detached, sample_ids)
        if embeddings.requires_grad:
            pending.embeddings, pending.norms, pending.labels = detached, norms, labels
            pending.waiting_for_grad = True
            embeddings.register_hook(self._gradient_hook(pending))
        self._pending.append(pending)
        return True

    def drain_unfinished(self, force: bool = False, finish: bool = False) -> list[WaitingStep]:
        """Moves completed steps to the host (one transfer each) and returns them,
        unfinished, when due (K waiting, or the oldest ~0.5 s old), ``finish`` or
        ``force``, else none yet; the caller finishes them
        (``batched_finish.finish_waiting``) where it likes, e.g. off the training
        thread (the SDK's writer thread). ``force``: also steps still waiting for a
        backward pass (logged without gradient statistics)."""
        if not self._pending and not len(self._unfinished):  # nothing logged since
            return []
        if force:
            self._close_waiting()
        ready = [p for p in self._pending if not p.waiting_for_grad and p.stats is not None]
        self._pending = [p for p in self._pending if p.waiting_for_grad]
        for pending in ready:
            host = pending.stats.transfer_later()  # waited for on the writer thread
            self._unfinished.add(pending.step, host, None, pending.sample_ids)
        if force or finish or self._unfinished.due():
            return self._unfinished.take()
        return []

    # -- internals -----------------------------------------------------------------
    def _send_only(self, embeddings: torch.Tensor, step: int, sizes: list[int]) -> None:
        """A rank other than 0: its batch is sent; its gradient will be, in the hook."""
        if not embeddings.requires_grad:
            return
        pending = _Pending(step, None, sizes, waiting_for_grad=True)
        embeddings.register_hook(self._gradient_hook(pending))
        self._pending.append(pending)

    def _global_gradient(self, pending: _Pending, grad: torch.Tensor) -> torch.Tensor:
        """The step's gradient over the global batch, as DDP averages it (collective)."""
        if not pending.sizes:
            return _snapshot(grad)
        gathered = gather_rows(grad.detach().float(), self.context, pending.sizes)
        return gathered / self.context.world_size

    def _close_waiting(self) -> None:
        for pending in self._pending:
            if pending.waiting_for_grad:
                pending.waiting_for_grad = False
                pending.embeddings = pending.norms = pending.labels = None

    def _gradient_hook(self, pending: _Pending) -> Callable[[torch.Tensor], None]:
        def hook(grad: torch.Tensor) -> None:
            if not pending.waiting_for_grad:  # a second backward through the same graph
                return
            grad = self._global_gradient(pending, grad)
            if pending.stats is None:  # sent; rank 0 computes
                pending.waiting_for_grad = False
                return
            if pending.norms is None:  # reduced on the host: one group, as the engine's
                # (its batch group is the first; the gradient joins it, so the finish
                # reduces the embeddings once and they travel once)
                pending.stats.groups[0] = batch_statistics(
                    pending.embeddings, pending.labels, grad, host=True
                )
            else:
                pending.stats.add(gradient_statistics(pending.embeddings, pending.norms, grad))
            pending.waiting_for_grad = False
            pending.embeddings = pending.norms = pending.labels = None

        return hook

    def _add_tracked(self, pending: _Pending, batch: torch.Tensor, sample_ids: Any) -> None:
        if self.tracked_forward is not None:
            inputs, forward = self.tracked_forward
            with torch.no_grad():
                tracked = forward(inputs)
            pending.stats.add(self.directions.update(tracked))
            pending.stats.sample_norms = self.directions.norms
            pending.sample_ids = self.tracked_ids.tolist()
            return
        if not len(self.tracked_ids) or sample_ids is None:
            return
        ids = np.asarray(torch.as_tensor(sample_ids).cpu()).reshape(-1).astype(np.int64)
        if ids.shape[0] != batch.shape[0]:
            raise ValueError(
                f"sample_ids must have one entry per embedding ({batch.shape[0]}), got {len(ids)}"
            )
        rows = np.nonzero(np.isin(ids, self.tracked_ids))[0]
        if not len(rows):
            return
        order = rows[np.argsort(ids[rows], kind="stable")]
        picked = batch[torch.as_tensor(order, device=batch.device)]
        if len(order) == len(self.tracked_ids):  # the whole tracked set: it can turn
            pending.stats.add(self.directions.update(picked))
        pending.stats.sample_norms = torch.linalg.vector_norm(picked, dim=1)
        pending.sample_ids = ids[order].tolist()


def _snapshot(tensor: torch.Tensor) -> torch.Tensor:
    """A detached float view of ``tensor``, copied when its raw values go to the host
    whole (``reduces_on_host``): they are read at the next ``drain``, after the user's
    backward and optimiser step, and an in-place edit of the user's tensor (or autograd
    reusing a gradient buffer) meanwhile must not change what this step logged."""
    detached = tensor.detach().float()
    if reduces_on_host(detached) and detached.data_ptr() == tensor.data_ptr():
        return detached.clone()
    return detached
