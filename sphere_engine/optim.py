"""Optimisers and learning-rate schedules built from the run config.

The backbone and the head / loss parameters (classifier weights, center-loss
centres) form separate parameter groups so they can have different learning rates.
Fixed polytope heads hold buffers only and contribute no group.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import torch
from torch import nn

from sphere_engine.catalogue.facts import OPTIMIZERS
from sphere_engine.config import OptimizerConfig, ScheduleConfig


def build_optimizer(
    config: OptimizerConfig, backbone: nn.Module, head_params: Iterable[nn.Parameter]
) -> torch.optim.Optimizer:
    """One optimiser over two parameter groups: ``backbone`` at ``lr`` and the head /
    loss parameters at ``head_lr`` (``lr`` when unset). The backbone's new embedding
    layer (``backbone.embedding``) belongs to the head group, as in the DML papers'
    "lr backbone / lr head" (a pretrained trunk learns slower than the fresh layers).
    Each group remembers its base learning rate in ``initial_lr`` for the schedule."""
    head_lr = config.lr if config.head_lr is None else config.head_lr
    embedding = getattr(backbone, "embedding", None)
    fresh = list(embedding.parameters()) if isinstance(embedding, nn.Module) else []
    fresh_ids = {id(p) for p in fresh}
    head_params = [*fresh, *head_params]
    groups = [
        {
            "params": [
                p for p in backbone.parameters() if p.requires_grad and id(p) not in fresh_ids
            ],
            "lr": config.lr,
            "initial_lr": config.lr,
            "name": "backbone",
        }
    ]
    trainable_head = [p for p in head_params if p.requires_grad]
    if trainable_head:
        groups.append(
            {"params": trainable_head, "lr": head_lr, "initial_lr": head_lr, "name": "head"}
        )
    if config.name == "sgd":
        return torch.optim.SGD(
            groups,
            lr=config.lr,
            momentum=config.momentum,
            nesterov=config.nesterov and config.momentum > 0,
            weight_decay=config.weight_decay,
        )
    if config.name == "adam":
        return torch.optim.Adam(groups, lr=config.lr, weight_decay=config.weight_decay)
    if config.name == "adamw":
        return torch.optim.AdamW(groups, lr=config.lr, weight_decay=config.weight_decay)
    if config.name == "rmsprop":  # MLRC's optimiser (SCIENCE.md §9); torch's alpha and eps
        return torch.optim.RMSprop(
            groups, lr=config.lr, momentum=config.momentum, weight_decay=config.weight_decay
        )
    raise ValueError(f"optimizer.name: {config.name!r} is not one of {', '.join(OPTIMIZERS)}")


def lr_multiplier(config: ScheduleConfig, total_steps: int) -> Callable[[int], float]:
    """Factor applied to each group's base lr at a (1-based) step.

    Linear warm-up over ``warmup_steps``, then constant, step decay (× gamma at each
    milestone passed) or cosine from 1 down to ``min_lr_ratio`` at the last step.
    """

    def multiplier(step: int) -> float:
        if config.warmup_steps and step <= config.warmup_steps:
            return step / config.warmup_steps
        if config.name == "step":
            passed = sum(1 for milestone in config.milestones if step >= milestone)
            return config.gamma**passed
        if config.name == "cosine":
            span = max(1, total_steps - config.warmup_steps)
            progress = min(1.0, (step - config.warmup_steps) / span)
            cosine = 0.5 * (1 + math.cos(math.pi * progress))
            return config.min_lr_ratio + (1 - config.min_lr_ratio) * cosine
        return 1.0

    return multiplier


def apply_lr(optimizer: torch.optim.Optimizer, factor: float) -> float:
    """Set every group's lr to its base lr × factor; returns the backbone's lr."""
    for group in optimizer.param_groups:
        group["lr"] = group["initial_lr"] * factor
    return optimizer.param_groups[0]["lr"]
