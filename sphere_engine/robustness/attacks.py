"""L∞ adversarial attacks as pure torch functions (SCIENCE.md §7).

Both attacks take ``loss_of(inputs) -> per-sample losses`` (B,) to *increase*:

- FGSM: x' = clip(x + ε·sign(∇ₓL(x)));
- PGD: from a uniform random start in the ε-ball (``random_start``), ``steps`` steps
  x ← clip(Π_ε(x + α·sign(∇ₓL(x)))), Π_ε projecting onto the ball around the clean x;
  α (``step_size``) defaults to 2.5·ε/steps (Madry et al. 2018).

``clip`` keeps every value in ``input_range`` = (lo, hi), the valid input range. The
gradient is taken with respect to the inputs only (never accumulated on the model's
parameters), with autograd enabled even inside ``torch.no_grad``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

LossOf = Callable[[torch.Tensor], torch.Tensor]


def check_attack_options(epsilon: float, input_range: tuple[float, float]) -> None:
    """ValueError for a negative ε or an empty input range."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, int | float) or not epsilon >= 0:
        raise ValueError(f"epsilon must be a non-negative number; got {epsilon!r}")
    low, high = input_range
    if not low < high:
        raise ValueError(f"input_range must be (low, high) with low < high; got {input_range!r}")


def _input_gradient(loss_of: LossOf, inputs: torch.Tensor) -> torch.Tensor:
    with torch.enable_grad():
        inputs = inputs.detach().requires_grad_(True)
        (gradient,) = torch.autograd.grad(loss_of(inputs).sum(), inputs)
    return gradient


def fgsm(
    loss_of: LossOf,
    inputs: torch.Tensor,
    epsilon: float,
    *,
    input_range: tuple[float, float] = (0.0, 1.0),
) -> torch.Tensor:
    """FGSM adversarial inputs (same shape as ``inputs``), in the ε-ball and the range."""
    check_attack_options(epsilon, input_range)
    step = epsilon * _input_gradient(loss_of, inputs).sign()
    return (inputs.detach() + step).clamp(*input_range)


def pgd(
    loss_of: LossOf,
    inputs: torch.Tensor,
    epsilon: float,
    *,
    steps: int = 10,
    step_size: float | None = None,
    random_start: bool = True,
    input_range: tuple[float, float] = (0.0, 1.0),
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """PGD (L∞) adversarial inputs, in the ε-ball around ``inputs`` and the range."""
    check_attack_options(epsilon, input_range)
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be a positive integer; got {steps!r}")
    if step_size is None:
        step_size = 2.5 * epsilon / steps
    elif not step_size > 0:
        raise ValueError(f"step_size must be positive; got {step_size!r}")
    clean = inputs.detach()
    adversarial = clean.clone()
    if random_start:
        noise = torch.rand(clean.shape, generator=generator, dtype=clean.dtype)
        adversarial = adversarial + epsilon * (2 * noise.to(clean.device) - 1)
    adversarial = adversarial.clamp(*input_range)
    for _ in range(steps):
        adversarial = adversarial + step_size * _input_gradient(loss_of, adversarial).sign()
        adversarial = torch.min(torch.max(adversarial, clean - epsilon), clean + epsilon)
        adversarial = adversarial.clamp(*input_range)
    return adversarial


def classification_loss(model: nn.Module, head: nn.Module, labels: torch.Tensor) -> LossOf:
    """Per-sample cross-entropy of head(model(x)) against ``labels`` (untargeted attack)."""

    def loss_of(inputs: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(head(model(inputs)), labels, reduction="none")

    return loss_of


def embedding_shift_loss(model: nn.Module, clean_embeddings: torch.Tensor) -> LossOf:
    """−cos(f(x'), f(x)): moves each query's embedding away from its clean direction.

    The attack for models trained with pair losses (no classifier): it needs no labels
    and no gallery, and turning the query away from where it was is what breaks its
    nearest-neighbour match in a cosine gallery.
    """
    clean = F.normalize(clean_embeddings.detach(), dim=1)

    def loss_of(inputs: torch.Tensor) -> torch.Tensor:
        return -(F.normalize(model(inputs), dim=1) * clean).sum(dim=1)

    return loss_of
