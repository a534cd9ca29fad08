"""What the Launch page tells before a launch: settings no one means (warned about,
launched only when confirmed) and how long the run should take, from the steady rate
of recent finished runs of the same model on the same data."""

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
#: The first share of a run's steps is its warm-up (imports, data loading, the first
#: batches): left out of its rate, which a 15 s run's start-up made 20x too slow.
WARM_UP_SHARE = 0.1
#: The series whose logged wall times give a run's steady rate (every training run logs it).
RATE_SERIES = "loss/total"


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
    """The duration of ``config``'s run at the median steady rate (``steady_rate``) of
    the ``RECENT_RUNS`` newest finished training runs of the same model on the same
    data (``data.name``); None without any. ``now`` is unused (kept for callers)."""
    model = str((config.get("model") or {}).get("name", ""))
    dataset = str((config.get("data") or {}).get("name", ""))
    steps = (config.get("training") or {}).get("steps")
    if frame.empty or not model or not isinstance(steps, int):
        return None
    same = [
        row.run_id
        for row in frame.itertuples()
        if row.kind == "train"
        and row.status == "finished"
        and str((row.config or {}).get("model", {}).get("name")) == model
        and str((row.config or {}).get("data", {}).get("name")) == dataset
    ][:RECENT_RUNS]
    if not same:
        return None
    series, _ = data.metric_series(same, [RATE_SERIES])
    rates = [r for run_id in same if (r := steady_rate(series[series["run_id"] == run_id]))]
    if not rates:
        return None
    rate = float(pd.Series(rates).median())
    return Estimate(steps / rate, rate, len(rates), model)


def steady_rate(rows: pd.DataFrame) -> float | None:
    """Steps per second of one run's logged ``rows`` (step, wall_time) after its warm-up
    (the first ``WARM_UP_SHARE`` of its steps); None when too little was logged."""
    if rows.empty:
        return None
    rows = rows.sort_values("step")
    steady = rows[rows["step"] > WARM_UP_SHARE * float(rows["step"].max())]
    if len(steady) < 2:
        return None
    first, last = steady.iloc[0], steady.iloc[-1]
    seconds = float(last["wall_time"]) - float(first["wall_time"])
    return (float(last["step"]) - float(first["step"])) / seconds if seconds > 0 else None
