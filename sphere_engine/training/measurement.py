"""What a logged step measures, queued where the batch lives and sent to the host in
one transfer.

The step's loss terms and regulariser diagnostics, its mining's statistics and cosine
histograms, the batch's norm, pair and gradient statistics and, on the steps that
``diagnostics.tracked_every`` picks, the tracked samples' norms and turns. In one
process on a GPU the batch's part (``batch_groups``) is replayed as one CUDA graph
(``diagnostics.cuda_graphs``: ``sphere_engine.diagnostics.cuda_graph``), and so is
the tracked samples' pass: their kernels cost the host more to launch than the device
to run. A data-parallel job gathers the global batch first (collectives: eager).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from sphere_engine.diagnostics.batch_statistics import batch_statistics
from sphere_engine.diagnostics.batched_finish import HostStep
from sphere_engine.diagnostics.step_transfer import (
    PackedStatistics,
    PendingTransfer,
    StepStatistics,
    flat_values,
    stacked,
)
from sphere_engine.losses.mining_record import MiningRecord

if TYPE_CHECKING:
    from sphere_engine.training.setup import TrainingSetup

NO_MINING = (None, None, None, None)  # a loss without a mining record (a head, proxies)


@torch.no_grad()
def batch_groups(
    embeddings: torch.Tensor,
    labels: torch.Tensor,
    gradients: torch.Tensor | None,
    *mining: torch.Tensor | None,
) -> tuple[torch.Tensor, list[PackedStatistics]]:
    """One process's statistics of its batch: the mining's (``MiningRecord`` tensors,
    or ``NO_MINING``) then the norms, pairs and gradients, as their groups and the
    groups' raw values in one tensor. A pure function of its inputs with no sync with
    the host: what ``TrainingSetup.batch_pass`` replays as a CUDA graph."""
    groups: list[PackedStatistics] = []
    if mining[0] is not None:
        record = MiningRecord(*mining)
        groups += [stacked(record.statistics()), record.histograms()]
    groups.append(batch_statistics(embeddings, labels, gradients))
    return flat_values(groups), groups


def measure_step(
    setup: TrainingSetup,
    loss: torch.Tensor,
    embeddings: torch.Tensor,
    labels: torch.Tensor,
    with_gradients: bool,
    track_samples: bool = True,
) -> PendingTransfer | HostStep:
    """A logged step's statistics, on their way to the host in one transfer (waited for
    when read); ``PendingStatistics`` finishes them later. ``track_samples``: with the
    tracked samples' norms and turns (their own no-grad pass, in the forward's
    precision and memory format)."""
    objective, tracked, parallel = setup.objective, setup.tracked, setup.parallel
    stats = StepStatistics()
    named = {
        "loss/total": loss,
        **{f"loss/{k}": v for k, v in objective.last_terms.items()},
        **objective.regularizer_diagnostics(),
    }
    gradients = setup.precision.unscaled(embeddings.grad) if with_gradients else None
    record = objective.mining_record()
    if parallel.is_distributed:  # the named values averaged over ranks, the global batch's
        mined = record.statistics() if record is not None else {}
        stats.add(parallel.mean({**named, **mined}))
        if record is not None:  # this rank's batch (counts)
            stats.add(record.histograms())
        stats.add(batch_statistics(*parallel.global_batch(embeddings, labels, gradients)))
    else:
        stats.add(named)
        mining = NO_MINING if record is None else record.tensors()
        flat, groups = setup.batch_pass(embeddings.detach(), labels, gradients, *mining)
        stats.add_flat(groups, flat)
    if track_samples and len(tracked.ids) and parallel.is_main:
        embedded = tracked.embed(tracked.inputs)  # in the forward's precision
        stats.add(tracked.directions.update(embedded))  # float32 from here
        stats.sample_norms = tracked.directions.norms
    return stats.transfer_later()
