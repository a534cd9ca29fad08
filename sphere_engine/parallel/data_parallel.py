"""``DataParallel``: one process's place in a data-parallel job and its collectives.

``run_training`` receives one; ``SINGLE_PROCESS`` (the default) makes every method the
identity, so a one-process run does no communication at all. Under a job of N
processes (``torch.distributed`` initialised, gloo on CPU, NCCL on GPU):

- each process trains on an equal contiguous slice of the configured global batch
  (``shard``), the model is wrapped in ``DistributedDataParallel`` (``wrap``) and the
  objective's own parameters (a classifier head) have their gradients averaged the
  same way (``average_gradients``);
- on logged steps the embeddings, labels and embedding gradients are gathered
  (``global_batch``, with the SDK's collectives of ``sphere_engine.distributed``), so
  every per-step statistic is the global batch's; the named scalars (losses,
  regulariser terms) are averaged over processes (``mean``);
- rank 0 reads the cancel flag and ``StopAgreement`` (``stop_agreement.py``) tells all
  processes at the same step; rank 0 alone evaluates (on the whole test split, as one
  process does), writes checkpoints and reports to its tracker.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import torch
from torch import Tensor

from sphere_engine.distributed import DistributedContext, gather_batch, gather_rows
from sphere_engine.job_rank import JobRank

T = TypeVar("T")


@dataclass(frozen=True)
class DataParallel(JobRank):
    """The loop's collectives for this process's place in the job (``JobRank``)."""

    @classmethod
    def from_process_group(cls) -> DataParallel:
        """This process's place in the initialised default process group."""
        import torch.distributed as dist

        rank = dist.get_rank()
        local_rank = int(os.environ.get("LOCAL_RANK", rank))
        return cls(rank, dist.get_world_size(), local_rank)

    def shard(self, batch: Sequence[T]) -> list[T]:
        """This rank's contiguous slice of the global batch (``config.devices`` checked
        that it splits evenly; a P×K batch lists its classes one after the other, so each
        rank gets whole classes)."""
        size = len(batch) // self.world_size
        return list(batch[self.rank * size : (self.rank + 1) * size])

    def wrap(self, model: torch.nn.Module, device: torch.device) -> torch.nn.Module:
        """The module the loop calls for training: ``model`` itself, or under DDP."""
        if not self.is_distributed:
            return model
        from torch.nn.parallel import DistributedDataParallel

        if device.type != "cuda":  # SyncBatchNorm is GPU-only: CPU ranks normalise their slice
            return DistributedDataParallel(model)
        # batch norm over the global batch, as one process computes it (the layers are
        # replaced inside ``model``, which stays the module evaluated and saved)
        model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
        index = device.index if device.index is not None else torch.cuda.current_device()
        return DistributedDataParallel(model, device_ids=[index])

    def average_gradients(self, parameters: Iterable[torch.nn.Parameter]) -> None:
        """Average the gradients of parameters outside the DDP-wrapped model (a
        classifier head's weights) over the ranks, as DDP does for the model's."""
        if not self.is_distributed:
            return
        import torch.distributed as dist

        grads = [p.grad for p in parameters if p.grad is not None]
        if not grads:
            return
        flat = torch.cat([g.reshape(-1) for g in grads])
        dist.all_reduce(flat)
        flat /= self.world_size
        offset = 0
        for grad in grads:
            grad.copy_(flat[offset : offset + grad.numel()].view_as(grad))
            offset += grad.numel()

    @property
    def context(self) -> DistributedContext:
        """The job as ``sphere_engine.distributed``'s collectives (shared with the SDK)
        see it: the default process group."""
        return DistributedContext(self.rank, self.world_size, self.local_rank, source="devices")

    def global_batch(
        self, embeddings: Tensor, labels: Tensor, gradients: Tensor | None
    ) -> tuple[Tensor, Tensor, Tensor | None]:
        """The global batch's embeddings, labels and embedding gradients, in rank order.
        The job minimises the mean of the ranks' losses (DDP averages the parameter
        gradients), so the gradient of its objective for an embedding is its rank's / N."""
        if not self.is_distributed:
            return embeddings, labels, gradients
        context = self.context
        # every rank's shard has the same size (``shard``): nothing to exchange
        sizes = [embeddings.shape[0]] * self.world_size
        batch = gather_batch(embeddings, labels, context, sizes=sizes)
        if gradients is not None:
            gradients = gather_rows(gradients.detach().float(), context, batch.sizes)
            gradients /= self.world_size
        return batch.embeddings, batch.labels, gradients

    def mean(self, named: Mapping[str, Tensor]) -> dict[str, Tensor]:
        """Each named 0-dim tensor averaged over the ranks (one all-reduce for all)."""
        if not self.is_distributed or not named:
            return dict(named)
        import torch.distributed as dist

        stacked = torch.stack([value.detach().float().reshape(()) for value in named.values()])
        dist.all_reduce(stacked)
        stacked /= self.world_size
        return dict(zip(named, stacked.unbind(), strict=True))


SINGLE_PROCESS = DataParallel()
