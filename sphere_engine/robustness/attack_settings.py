"""``AttackSettings``: how a robustness curve attacks its inputs (SCIENCE.md §7)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from sphere_engine.catalogue.facts import ATTACKS, DEFAULT_EPSILONS
from sphere_engine.robustness.attacks import LossOf, check_attack_options, fgsm, pgd


@dataclass(frozen=True)
class AttackSettings:
    """The attacks of a curve (``ATTACKS``: fgsm, pgd) at each ε of ``epsilons``, in
    the valid ``input_range``; PGD's ``steps``, ``step_size`` (None: 2.5·ε/steps) and
    ``random_start``; inputs attacked ``batch_size`` at a time; PGD's random starts
    drawn from a generator seeded with ``seed`` (a result is reproducible on one
    device). Checked when built: a bad setting raises ``ValueError`` naming it."""

    epsilons: Sequence[float] = DEFAULT_EPSILONS
    attacks: Sequence[str] = ATTACKS
    steps: int = 10
    step_size: float | None = None
    random_start: bool = True
    input_range: tuple[float, float] = (0.0, 1.0)
    batch_size: int = 512
    seed: int = 0

    def __post_init__(self) -> None:
        if not self.epsilons:
            raise ValueError("epsilons must list at least one ε")
        for epsilon in self.epsilons:
            check_attack_options(epsilon, self.input_range)
        unknown = [attack for attack in self.attacks if attack not in ATTACKS]
        if unknown or not self.attacks:
            raise ValueError(
                f"attacks must be a non-empty subset of {list(ATTACKS)}; got {self.attacks!r}"
            )
        size = self.batch_size
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"batch_size must be a positive integer; got {size!r}")

    def attack(
        self,
        name: str,
        loss_of: LossOf,
        inputs: torch.Tensor,
        epsilon: float,
        generator: torch.Generator,
    ) -> torch.Tensor:
        """``inputs`` attacked by ``name`` at ``epsilon`` to increase ``loss_of``."""
        if name == "fgsm":
            return fgsm(loss_of, inputs, epsilon, input_range=self.input_range)
        return pgd(
            loss_of,
            inputs,
            epsilon,
            steps=self.steps,
            step_size=self.step_size,
            random_start=self.random_start,
            input_range=self.input_range,
            generator=generator,
        )
