"""One training step: forward, backward, diagnostics, optimiser step.

``train_step`` is the seam for how a step is computed: mixed precision (autocast
around the forward, a gradient scaler around backward and step) and distributed
gradient synchronisation change this function, not the loop around it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from sphere_engine.diagnostics.batch_statistics import StepStatistics, batch_statistics
from sphere_engine.diagnostics.host_copy import HostCopy
from sphere_engine.diagnostics.packed_statistics import PendingTransfer
from sphere_engine.diagnostics.pending_statistics import HostStep
from sphere_engine.training.setup import TrainingSetup


@dataclass
class StepResult:
    """A step as read on the host: its loss and, on a logged step, the raw diagnostics
    (finished later by the reporter)."""

    loss: float
    host: HostStep | None

    @property
    def diverged(self) -> bool:
        return not math.isfinite(self.loss)


@dataclass
class StepOutcome:
    """A queued step's loss and, on a logged step, its diagnostics, on their way to the
    host; ``read`` waits for them. The loop reads a step after queuing the next one, so
    the device never waits for the host."""

    loss: HostCopy | None  # an unlogged step's loss (a logged step's is in ``host``)
    host: PendingTransfer | HostStep | None  # HostStep: already on the host (CPU)

    def read(self) -> StepResult:
        if self.host is not None:
            host = self.host.result()
            return StepResult(host.raw_value("loss/total"), host)
        assert self.loss is not None
        return StepResult(float(self.loss.numpy()[0]), None)


def train_step(
    setup: TrainingSetup,
    inputs: torch.Tensor,
    labels: torch.Tensor,
    *,
    logged: bool,
    track_samples: bool | None = None,
) -> StepOutcome:
    """Queue one batch's training on the device and return without waiting for it: the
    loop reads the outcome later (a step whose loss is not finite ends the run there,
    its own update applied: the run fails either way). ``track_samples``: whether a
    logged step also embeds the tracked samples (the loop's ``tracks_samples``; None: on
    every logged step)."""
    keep_embedding_grad = logged and setup.config.diagnostics.gradient_stats
    precision = setup.precision
    if setup.channels_last:
        inputs = inputs.contiguous(memory_format=torch.channels_last)

    # ---- forward (the backbone under training.amp; loss and diagnostics in float32)
    with precision.autocast():
        embeddings = setup.trained(inputs)
    embeddings = embeddings.float()
    if keep_embedding_grad:
        embeddings.retain_grad()
    loss = setup.objective(embeddings, labels)

    # ---- backward
    setup.optimizer.zero_grad(set_to_none=True)
    precision.backward(loss)
    setup.parallel.average_gradients(setup.objective.parameters())

    # ---- diagnostics (no autograd; one host transfer for all of them, not waited for)
    if logged:
        track = logged if track_samples is None else track_samples
        host = measure_step(setup, loss, embeddings, labels, keep_embedding_grad, track)
        outcome = StepOutcome(None, host)
    else:  # the loss alone: divergence must be caught
        outcome = StepOutcome(HostCopy(loss.detach().float().reshape(1)), None)

    # ---- optimiser step
    precision.step(setup.optimizer)
    return outcome


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
    stats.add(  # the named 0-dim tensors (averaged over ranks): one group, one stack
        parallel.mean(
            {
                "loss/total": loss,
                **{f"loss/{k}": v for k, v in objective.last_terms.items()},
                **objective.regularizer_diagnostics(),
                **objective.mining_diagnostics(),
            }
        )
    )
    histograms = objective.mining_histograms()  # this rank's batch (counts, not averaged)
    if histograms is not None:
        stats.add(histograms)
    gradients = setup.precision.unscaled(embeddings.grad) if with_gradients else None
    stats.add(batch_statistics(*parallel.global_batch(embeddings, labels, gradients)))
    if track_samples and len(tracked.ids) and parallel.is_main:
        with setup.precision.autocast():
            embedded = tracked.embed(tracked.inputs)
        stats.add(tracked.directions.update(embedded))  # float32 from here
        stats.sample_norms = tracked.directions.norms
    return stats.transfer_later()
