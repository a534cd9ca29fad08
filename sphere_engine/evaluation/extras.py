"""The evaluations of SCIENCE.md §7 as the training evaluation runs them: which samples
are queries, whether the linear probe runs, and robustness in pixel space.

Called by ``evaluation.Evaluator`` at evaluation steps only (never per training step).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from sphere_engine.config import RobustnessConfig, RunConfig
from sphere_engine.data.dataset_splits import PixelRange
from sphere_engine.validation.registries import registry_for

QUERY_SEED_OFFSET = 7919  # the query/gallery split has its own stream of the run's seed
PROBE_SEED_OFFSET = 15485863


def query_mask(count: int, fraction: float, seed: int) -> np.ndarray:
    """``count`` booleans, ``round(fraction · count)`` of them True (the queries), chosen
    with ``seed``; at least one query and one gallery sample."""
    if count < 2:
        raise ValueError(f"the query/gallery split needs at least 2 samples; got {count}")
    queries = min(max(round(fraction * count), 1), count - 1)
    mask = np.zeros(count, dtype=bool)
    mask[np.random.default_rng(seed + QUERY_SEED_OFFSET).permutation(count)[:queries]] = True
    return mask


def probe_indices(count: int, limit: int, seed: int) -> np.ndarray:
    """At most ``limit`` sorted train-split indices for the linear probe (seeded)."""
    rng = np.random.default_rng(seed + PROBE_SEED_OFFSET)
    return np.sort(rng.permutation(count)[: min(limit, count)])


def linear_probe_enabled(config: RunConfig) -> bool:
    """``on``, or ``auto`` for a self-supervised objective (its traits say
    ``requires_views``: NT-Xent) on the ``standard`` split (test classes = train classes)."""
    choice = config.evaluation.linear_probe
    if choice != "auto":
        return choice == "on"
    if config.data.split != "standard":
        return False
    objective = config.objective
    return registry_for("objective", objective.kind).traits(objective.name).requires_views


def robustness_due(config: RobustnessConfig, final: bool) -> bool:
    return config.enabled and (final or config.every_evaluation)


class PixelModel(nn.Module):
    """``model`` fed with pixels in [0, 1]: attacks and ε live in pixel units."""

    def __init__(self, model: nn.Module, pixel_range: PixelRange) -> None:
        super().__init__()
        self.model = model
        self.pixel_range = pixel_range

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        return self.model(self.pixel_range.to_inputs(pixels))


def robustness_metrics(
    model: nn.Module,
    head: nn.Module | None,
    inputs: torch.Tensor,
    labels: np.ndarray,
    pixel_range: PixelRange | None,
    config: RobustnessConfig,
    seed: int,
) -> dict[str, float]:
    """Accuracy under attack for a classifier head whose classes are the test classes
    (``head`` given), else R@1 of attacked queries against the clean gallery; keys of
    ``sphere_engine.robustness`` per attack and ε (pixel units)."""
    from sphere_engine.robustness import AttackSettings, robustness_accuracy, robustness_recall

    # validation refuses robustness for datasets without a pixel range (the one check)
    assert pixel_range is not None, "robustness without a pixel range passed validation"
    pixel_model = PixelModel(model, pixel_range)
    pixels = pixel_range.to_pixels(inputs)
    targets = torch.as_tensor(labels, device=inputs.device)
    settings = AttackSettings(
        epsilons=tuple(config.epsilons),
        attacks=tuple(config.attacks),
        steps=config.steps,
        step_size=config.step_size or None,
        random_start=config.random_start,
        input_range=(0.0, 1.0),
        seed=seed,
    )
    with torch.enable_grad():
        if head is not None:
            return robustness_accuracy(pixel_model, head, pixels, targets, settings)
        return robustness_recall(pixel_model, pixels, targets, settings)
