"""The fixed set of training samples a run follows, and how they are embedded.

On the logged steps ``diagnostics.tracked_every`` picks, the tracked samples are
embedded with the current weights (their norms and how far they turned,
``diagnostics.DirectionTracker``) in a no-grad pass of their own, in the training
forward's precision and memory format. Not every step: on small images that pass costs
about as much as the training forward (the weights, not the batch, dominate). Not as
extra rows of the training forward: that would change the training batch's matmul
shapes, so a run's trajectory would depend, in its last bits, on whether
it tracks samples; a diagnostic must not perturb what it observes. Nor on a helper
thread during the backward: with every core busy (other runs, the dashboard) the loop
would wait for the scheduler to run that thread.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable

import numpy as np
import torch

from sphere_engine.diagnostics.cuda_graph import GraphedPass

# Modules whose output depends on train/eval mode (batch statistics, random masks).
_MODE_DEPENDENT = (torch.nn.modules.batchnorm._NormBase, torch.nn.modules.dropout._DropoutNd)


def choose_tracked_samples(labels: np.ndarray, count: int, seed: int) -> np.ndarray:
    """A fixed, seed-determined set of training samples, spread over the classes."""
    if count == 0:
        return np.zeros(0, dtype=np.int64)
    rng = np.random.default_rng(seed + 7919)
    order = rng.permutation(len(labels))
    # round-robin over classes so every class is represented when count ≥ classes
    by_class: dict[int, list[int]] = {}
    for index in order:
        by_class.setdefault(int(labels[index]), []).append(int(index))
    chosen: list[int] = []
    while len(chosen) < min(count, len(labels)):
        for members in by_class.values():
            if members and len(chosen) < count:
                chosen.append(members.pop())
    return np.array(sorted(chosen), dtype=np.int64)


def tracked_embedder(
    model: torch.nn.Module,
    autocast: Callable[..., contextlib.AbstractContextManager] | None = None,
    *,
    graphed: bool = False,
) -> Callable[[torch.Tensor], torch.Tensor]:
    """How the tracked samples are embedded in a pass of their own: in eval mode
    (BatchNorm must not learn from them, dropout must not perturb them) when the model
    has such modules; otherwise a plain forward, which is the same function of the same
    weights without the two mode switches (each walks every module: a third of the
    tracked forward's cost on a small model). ``autocast``: the training forward's
    (``Precision.autocast``). ``graphed``: on CUDA, replayed as one CUDA graph
    (``cuda_graph``): the inputs never change and the optimiser updates the weights in
    place, so the replay embeds them with the current weights, in one launch instead of
    the forward's hundreds."""
    modal = any(isinstance(module, _MODE_DEPENDENT) for module in model.modules())
    plain = functools.partial(_embed_in_eval_mode if modal else _embed, model)
    if autocast is None:
        forward = plain
    else:

        def forward(inputs: torch.Tensor) -> torch.Tensor:
            with autocast(cache_enabled=not graphed):
                return plain(inputs)

    if not graphed:
        return forward
    replayed = GraphedPass(forward, name="the tracked samples' pass")

    def embed(inputs: torch.Tensor) -> torch.Tensor:
        return replayed(inputs).clone()  # the graph's output is rewritten by its next replay

    return embed


@torch.no_grad()
def _embed(model: torch.nn.Module, inputs: torch.Tensor) -> torch.Tensor:
    return model(inputs)


@torch.no_grad()
def _embed_in_eval_mode(model: torch.nn.Module, inputs: torch.Tensor) -> torch.Tensor:
    """Embeddings in eval mode (BatchNorm must not learn from the tracked samples)."""
    model.eval()
    try:
        return model(inputs)
    finally:
        model.train()
