"""Robustness curves: accuracy, or R@1 against a clean gallery, as a function of ε.

Keys, one per attack and ε of the ``AttackSettings`` (ε written with ``%g``):

- ``robustness_accuracy``: ``robustness/{fgsm,pgd}/accuracy@eps=0.1`` — accuracy of
  ``head(model(x'))`` on inputs attacked with the cross-entropy loss;
- ``robustness_recall``: ``robustness/{fgsm,pgd}/recall@1@eps=0.1`` — each attacked
  query's nearest clean gallery embedding (cosine) has its label; the attack moves the
  query's embedding away from its clean direction (``embedding_shift_loss``). Without
  a separate gallery the clean embeddings of the same inputs are the gallery and a
  query never retrieves its own clean row (leave-one-out). Queries whose class has no
  other gallery sample are left out, as in ``sphere_engine.metrics.retrieval``.

The model is put in eval mode and its parameters frozen for the evaluation (both
restored afterwards: autograd then computes no weight gradients); inputs are attacked
in batches of ``settings.batch_size``, PGD's random starts seeded with ``settings.seed``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import torch
import torch.nn.functional as F
from torch import nn

from sphere_engine.robustness.attack_settings import AttackSettings
from sphere_engine.robustness.attacks import LossOf, classification_loss, embedding_shift_loss

DEFAULT_SETTINGS = AttackSettings()


@contextmanager
def _eval_mode(*modules: nn.Module) -> Iterator[None]:
    """Eval mode and frozen parameters for the duration; both restored on exit.

    Frozen (``requires_grad`` off): the attacks differentiate with respect to the
    inputs only, and with trainable parameters autograd would also compute every
    weight's gradient in each backward pass (discarded, but paid: ~14 % of a PGD step
    of LeNet++ on a CPU). Each parameter's own flag is put back, even on an error.
    """
    was_training = [module.training for module in modules]
    parameters = {id(p): p for module in modules for p in module.parameters()}.values()
    was_trainable = [parameter.requires_grad for parameter in parameters]
    for module in modules:
        module.eval()
    try:
        for parameter in parameters:
            parameter.requires_grad_(False)
        yield
    finally:
        for parameter, trainable in zip(parameters, was_trainable, strict=True):
            parameter.requires_grad_(trainable)
        for module, training in zip(modules, was_training, strict=True):
            module.train(training)


def _check(inputs: torch.Tensor, labels: torch.Tensor, settings: AttackSettings) -> None:
    if labels.ndim != 1 or labels.shape[0] != inputs.shape[0] or inputs.shape[0] == 0:
        raise ValueError(
            f"labels must be 1-D with one entry per input; got {tuple(labels.shape)} for "
            f"{inputs.shape[0]} inputs"
        )
    low, high = settings.input_range
    if inputs.min() < low or inputs.max() > high:
        raise ValueError(
            f"inputs span [{float(inputs.min()):.4g}, {float(inputs.max()):.4g}], outside "
            f"input_range {settings.input_range!r}"
        )


def _curve(
    inputs: torch.Tensor,
    loss_for_batch: Callable[[slice], LossOf],
    score_batch: Callable[[slice, torch.Tensor], torch.Tensor],
    metric: str,
    settings: AttackSettings,
) -> dict[str, float]:
    """Sum of per-sample scores of attacked batches / counted samples, per attack and ε."""
    result = {}
    for attack in settings.attacks:
        generator = torch.Generator().manual_seed(settings.seed)
        for epsilon in settings.epsilons:
            total, counted = 0.0, 0
            for start in range(0, inputs.shape[0], settings.batch_size):
                rows = slice(start, start + settings.batch_size)
                loss_of = loss_for_batch(rows)
                attacked = settings.attack(attack, loss_of, inputs[rows], epsilon, generator)
                with torch.no_grad():
                    scores = score_batch(rows, attacked)
                total += float(scores.nansum())
                counted += int((~scores.isnan()).sum())
            value = total / counted if counted else float("nan")
            result[f"robustness/{attack}/{metric}@eps={epsilon:g}"] = value
    return result


def robustness_accuracy(
    model: nn.Module,
    head: nn.Module,
    inputs: torch.Tensor,
    labels: torch.Tensor,
    settings: AttackSettings = DEFAULT_SETTINGS,
) -> dict[str, float]:
    """Classifier accuracy under attack (``model``: inputs → embeddings, ``head``:
    embeddings → logits) per attack and ε; ``inputs``: N × ... tensor, ``labels``: N."""
    _check(inputs, labels, settings)
    with _eval_mode(model, head):
        return _curve(
            inputs,
            lambda rows: classification_loss(model, head, labels[rows]),
            lambda rows, attacked: (head(model(attacked)).argmax(1) == labels[rows]).float(),
            "accuracy",
            settings,
        )


def robustness_recall(
    model: nn.Module,
    inputs: torch.Tensor,
    labels: torch.Tensor,
    settings: AttackSettings = DEFAULT_SETTINGS,
    *,
    gallery_embeddings: torch.Tensor | None = None,
    gallery_labels: torch.Tensor | None = None,
) -> dict[str, float]:
    """R@1 of attacked queries (N inputs, N labels) against a clean gallery: the given
    G × d ``gallery_embeddings`` with G ``gallery_labels``, or else the clean
    embeddings of ``inputs`` themselves with each query's own row excluded."""
    _check(inputs, labels, settings)
    if (gallery_embeddings is None) != (gallery_labels is None):
        raise ValueError("gallery_embeddings and gallery_labels must be given together")
    batch_size = settings.batch_size
    with _eval_mode(model), torch.no_grad():
        clean = torch.cat(
            [
                model(inputs[start : start + batch_size])
                for start in range(0, len(inputs), batch_size)
            ]
        )
    leave_one_out = gallery_embeddings is None
    gallery = F.normalize(clean if leave_one_out else gallery_embeddings.detach(), dim=1)
    gallery_y = labels if leave_one_out else gallery_labels
    classes, counts = torch.unique(gallery_y, return_counts=True)
    position = torch.searchsorted(classes, labels).clamp(max=classes.numel() - 1)
    found = classes[position] == labels  # counted per class: no N × G label matrix
    positives = torch.where(found, counts[position], 0) - int(leave_one_out)

    def hits(rows: slice, attacked: torch.Tensor) -> torch.Tensor:
        scores = F.normalize(model(attacked), dim=1) @ gallery.T
        if leave_one_out:
            own = torch.arange(rows.start, rows.start + scores.shape[0])
            scores[torch.arange(scores.shape[0]), own] = -torch.inf
        hit = (gallery_y[scores.argmax(1)] == labels[rows]).float()
        return torch.where(positives[rows] > 0, hit, torch.nan)

    with _eval_mode(model):
        return _curve(
            inputs,
            lambda rows: embedding_shift_loss(model, clean[rows]),
            hits,
            "recall@1",
            settings,
        )
