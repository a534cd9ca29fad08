"""The runs of a declared experiment: one config, name and tags per (variant, seed).

``spherescope reproduce`` and the Launch page's presets both plan from here, so a run
started either way carries the tags the report looks for (pure data, no torch).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sphere_engine.config import apply_overrides
from sphere_engine.experiments.spec import Experiment

#: Tags that mark a run as part of an experiment and name its variant.
EXPERIMENT_TAG = "repro:"
VARIANT_TAG = "variant:"


@dataclass(frozen=True)
class PlannedRun:
    name: str
    variant: str
    seed: int
    config: dict[str, Any]
    tags: tuple[str, ...]


def experiment_tags(experiment: Experiment, variant: str) -> tuple[str, ...]:
    """The tags by which the report finds a run of ``variant``."""
    return (f"{EXPERIMENT_TAG}{experiment.name}", f"{VARIANT_TAG}{variant}")


def plan(
    experiment: Experiment,
    seeds: Sequence[int] | None = None,
    steps_scale: float = 1.0,
    data_root: str | None = None,
    overrides: Sequence[str] = (),
    variants: Sequence[str] | None = None,
) -> list[PlannedRun]:
    """Every (variant, seed) run of ``experiment`` with its full config dict;
    ``overrides`` (``section.key=value``, as ``spherescope train --set``) apply last;
    ``variants``: only these arms (default all)."""
    if not steps_scale > 0:
        raise ValueError(f"steps_scale: {steps_scale!r} must be positive")
    chosen = tuple(experiment.seeds if seeds is None else seeds)
    if not chosen:
        raise ValueError("seeds: at least one seed is needed")
    steps = max(1, round(experiment.steps * steps_scale))
    chosen_variants = [experiment.variant(name) for name in variants] if variants else None
    return [
        PlannedRun(
            name=f"{experiment.name} | {variant.name} | seed={seed}",
            variant=variant.name,
            seed=seed,
            config=apply_overrides(experiment.config(variant, seed, steps, data_root), overrides),
            tags=experiment_tags(experiment, variant.name),
        )
        for variant in chosen_variants or experiment.variants
        for seed in chosen
    ]
