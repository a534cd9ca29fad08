"""One training step: forward, backward, diagnostics, optimiser step.

``train_step`` is the seam for how a step is computed: mixed precision (autocast
around the forward, a gradient scaler around backward and step) and distributed
gradient synchronisation change this function, not the loop around it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from sphere_engine.diagnostics.async_host_copy import AsyncHostCopy
from sphere_engine.diagnostics.batched_finish import HostStep
from sphere_engine.diagnostics.step_transfer import PendingTransfer
from sphere_engine.training.measurement import measure_step
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

    loss: AsyncHostCopy | None  # an unlogged step's loss (a logged step's is in ``host``)
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
        outcome = StepOutcome(AsyncHostCopy(loss.detach().float().reshape(1)), None)

    # ---- optimiser step
    precision.step(setup.optimizer)
    return outcome
