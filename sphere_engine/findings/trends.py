"""Small pure helpers the rules share: spans, halves, runs of a condition."""

from __future__ import annotations

import numpy as np
import pandas as pd


def first_nonfinite(series: pd.Series) -> int | None:
    """The first step whose value is NaN or infinite."""
    bad = ~np.isfinite(series.to_numpy(dtype=float))
    return int(series.index[bad.argmax()]) if bad.any() else None


def finite(series: pd.Series) -> pd.Series:
    return series[np.isfinite(series.to_numpy(dtype=float))]


def last_part(series: pd.Series, fraction: float) -> pd.Series:
    """The values logged in the last ``fraction`` of the run's logged steps."""
    if series.empty:
        return series
    first, last = int(series.index[0]), int(series.index[-1])
    return series[series.index >= last - (last - first) * fraction]


def longest_run(mask: pd.Series) -> tuple[int, int, int] | None:
    """The longest stretch of consecutive True entries: (length, first step, last step)."""
    values = mask.to_numpy(dtype=bool)
    best: tuple[int, int, int] | None = None
    start = None
    for i, value in enumerate([*values, False]):
        if value and start is None:
            start = i
        elif not value and start is not None:
            length = i - start
            if best is None or length > best[0]:
                best = (length, int(mask.index[start]), int(mask.index[i - 1]))
            start = None
    return best


def fmt(value: float) -> str:
    return f"{value:.3g}"
