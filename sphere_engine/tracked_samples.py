"""The fixed set of training samples a run follows, and how they are embedded.

At every logged step the tracked samples are embedded with the current weights (their
norms and how far they turned, ``diagnostics.DirectionTracker``). How depends on the
model: a model that embeds each row on its own (its ``rows_independent`` trait, and no
BatchNorm or dropout from its options) takes them in the training forward pass as
extra rows; otherwise they get their own no-grad pass, in eval mode when the model has
mode-dependent modules.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
import torch

from sphere_engine.registry import NO_TRAITS

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


def _has_mode_dependent_modules(model: torch.nn.Module) -> bool:
    return any(isinstance(module, _MODE_DEPENDENT) for module in model.modules())


def rides_along(model: torch.nn.Module) -> bool:
    """Whether the tracked samples can be extra rows of the training forward pass: the
    model declares that rows do not interact, and no option added BatchNorm or dropout.
    On a small model this saves most of a second forward (mostly dispatch), and the
    rows' values are those of a separate pass with the same weights."""
    traits = getattr(type(model), "traits", NO_TRAITS)
    return traits.rows_independent and not _has_mode_dependent_modules(model)


def forward_with_tracked(
    model: torch.nn.Module, inputs: torch.Tensor, tracked_inputs: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """One training forward of ``inputs`` and ``tracked_inputs`` (for ``rides_along``
    models): the batch's embeddings (in the graph, the loss's input) and the tracked
    samples' (detached; no gradient reaches the weights through them)."""
    outputs = model(torch.cat((inputs, tracked_inputs)))
    return outputs[: len(inputs)], outputs[len(inputs) :].detach()


def tracked_embedder(model: torch.nn.Module) -> Callable[[torch.Tensor], torch.Tensor]:
    """How the tracked samples are embedded in a pass of their own: in eval mode
    (BatchNorm must not learn from them, dropout must not perturb them) when the model
    has such modules; otherwise a plain forward, which is the same function of the same
    weights without the two mode switches (each walks every module: a third of the
    tracked forward's cost on a small model)."""
    if _has_mode_dependent_modules(model):
        return functools.partial(_embed_in_eval_mode, model)

    @torch.no_grad()
    def forward(inputs: torch.Tensor) -> torch.Tensor:
        return model(inputs)

    return forward


@torch.no_grad()
def _embed_in_eval_mode(model: torch.nn.Module, inputs: torch.Tensor) -> torch.Tensor:
    """Embeddings in eval mode (BatchNorm must not learn from the tracked samples)."""
    model.eval()
    try:
        return model(inputs)
    finally:
        model.train()
