"""Expansion of a sweep: a base config × a grid of dotted-key values × seeds."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from sphere_engine.config import set_path


def set_dotted(config: dict[str, Any], key: str, value: Any) -> None:
    """Set ``config["optimizer"]["lr"] = value`` for ``key = "optimizer.lr"`` (in place)."""
    parts = [part for part in key.split(".") if part]
    if len(parts) < 2:
        raise ValueError(f"sweep grid key {key!r}: expected section.setting (e.g. optimizer.lr)")
    set_path(config, parts, value, f"sweep grid key {key!r}")


def expand_grid(
    base: Mapping[str, Any], grid: Mapping[str, Sequence[Any]], seeds: Sequence[int]
) -> list[tuple[dict[str, Any], str]]:
    """Every combination of the grid's values, once per seed, as (config dict, label).

    The label names the values that vary (``"optimizer.lr=0.1 seed=1"``). An empty
    ``seeds`` keeps the base config's seed.
    """
    for key, values in grid.items():
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
            raise ValueError(
                f"sweep grid key {key!r}: expected a non-empty list of values, got {values!r}"
            )
    for seed in seeds:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"sweep seeds: {seed!r} is not a non-negative integer")
    keys = list(grid)
    expanded = []
    for combination in itertools.product(*(grid[key] for key in keys)):
        for seed in seeds or [None]:
            config = copy.deepcopy(dict(base))
            parts = []
            for key, value in zip(keys, combination, strict=True):
                set_dotted(config, key, value)
                parts.append(f"{key}={value}")
            if seed is not None:
                set_dotted(config, "training.seed", seed)
                parts.append(f"seed={seed}")
            expanded.append((config, " ".join(parts)))
    return expanded
