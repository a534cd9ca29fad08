"""What the Launch page tells before a launch: settings no one means (warned about,
launched only when confirmed) and how long the run should take, from the rate of
recent runs of the same model."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from app import data

#: (dotted config key, limit, why): a value at or above the limit is almost surely a
#: typo (a missing decimal point, an extra zero).
ABSURD: tuple[tuple[str, float, str], ...] = (
    ("training.steps", 1_000_000, "steps"),
    ("optimizer.lr", 10.0, "learning rate"),
    ("optimizer.head_lr", 10.0, "head learning rate"),
    ("data.batch_size", 100_000, "batch size"),
)
#: Recent runs whose rate makes the estimate.
RECENT_RUNS = 5


def absurd_settings(config: Mapping[str, Any]) -> list[str]:
    """One line per setting at or above its ``ABSURD`` limit."""
    flat = data.flatten_config(config)
    lines = []
    for key, limit, what in ABSURD:
        value = flat.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= limit:
            lines.append(f"`{key}` = {value:,} is an unusually large {what} (≥ {limit:,g}).")
    return lines


@dataclass(frozen=True)
class Estimate:
    seconds: float
    steps_per_s: float
    runs: int
    model: str


def estimate(
    config: Mapping[str, Any], frame: pd.DataFrame, now: float | None = None
) -> Estimate | None:
    """The duration of ``config``'s run at the median rate (steps per second since start)
    of the ``RECENT_RUNS`` newest training runs of the same model that got going;
    None without any."""
    model = str((config.get("model") or {}).get("name", ""))
    steps = (config.get("training") or {}).get("steps")
    if frame.empty or not model or not isinstance(steps, int):
        return None
    rates = []
    for row in frame.itertuples():
        if row.kind != "train" or str((row.config or {}).get("model", {}).get("name")) != model:
            continue
        elapsed = data.elapsed_seconds(row._asdict(), now)
        step = row.progress_step
        if elapsed and not pd.isna(step) and int(step) > 0:
            rates.append(int(step) / elapsed)
        if len(rates) == RECENT_RUNS:
            break
    if not rates:
        return None
    rate = float(pd.Series(rates).median())
    return Estimate(steps / rate, rate, len(rates), model)
