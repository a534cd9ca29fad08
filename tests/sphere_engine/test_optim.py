"""Optimiser parameter groups and learning-rate schedules."""

from __future__ import annotations

import math

import pytest
from torch import nn

from sphere_engine.config import OptimizerConfig, ScheduleConfig
from sphere_engine.optim import apply_lr, build_optimizer, lr_multiplier


def test_separate_head_learning_rate_and_sgd_options() -> None:
    backbone, head = nn.Linear(4, 3), nn.Linear(3, 2)
    optimizer = build_optimizer(
        OptimizerConfig(name="sgd", lr=0.1, head_lr=0.01, momentum=0.9, nesterov=True),
        backbone,
        head.parameters(),
    )
    assert [g["lr"] for g in optimizer.param_groups] == [0.1, 0.01]
    assert optimizer.defaults["nesterov"] is True
    assert apply_lr(optimizer, 0.5) == 0.05
    assert optimizer.param_groups[1]["lr"] == 0.005


def test_fixed_heads_add_no_group() -> None:
    optimizer = build_optimizer(
        OptimizerConfig(name="adamw", weight_decay=0.01), nn.Linear(2, 2), []
    )
    assert len(optimizer.param_groups) == 1


@pytest.mark.parametrize(
    ("schedule", "expected"),
    [
        (ScheduleConfig(name="constant", warmup_steps=4), {1: 0.25, 4: 1.0, 50: 1.0}),
        (
            ScheduleConfig(name="step", milestones=[10, 20], gamma=0.1),
            {9: 1.0, 10: 0.1, 19: 0.1, 20: 0.01},
        ),
        (ScheduleConfig(name="cosine", min_lr_ratio=0.1), {0: 1.0, 50: 0.55, 100: 0.1}),
    ],
)
def test_schedules(schedule: ScheduleConfig, expected: dict[int, float]) -> None:
    multiplier = lr_multiplier(schedule, total_steps=100)
    for step, value in expected.items():
        assert math.isclose(multiplier(step), value, rel_tol=1e-9, abs_tol=1e-12), step
