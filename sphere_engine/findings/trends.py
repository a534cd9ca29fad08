"""Small pure helpers the rules share: spans, halves, runs of a condition."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from sphere_engine.catalogue.metric import Source

if TYPE_CHECKING:
    from sphere_engine.findings.run_series import RunSeries

#: The evaluation a trend is read on: the first of these the run logged.
TREND_METRICS = ("recall@1", "map@r", "classifier_accuracy", "linear_probe/accuracy")
TREND_READS = tuple((Source.EVALUATION, key) for key in TREND_METRICS)
# Three points of Recall@1 lost from the best is beyond evaluation noise on a few
# thousand test queries.
DROP = 0.03
# Five points lost is a warning; between three and five, worth knowing.
SERIOUS_DROP = 0.05


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


def at_step(series: pd.Series, step: int) -> str:
    """``"step 5, the first logged step"`` or ``"step 40"``: what happened before the
    first logged step is not in the series, and a message must not hide it."""
    first = int(series.index[0]) if len(series) else None
    return f"step {step}, the first logged step" if step == first else f"step {step}"


def trend_metric(run: RunSeries) -> tuple[str, pd.Series]:
    """The evaluation a trend is read on (its key, finite values by step)."""
    for key in TREND_METRICS:
        series = finite(run.eval(key))
        if len(series):
            return key, series
    return TREND_METRICS[0], finite(run.eval(TREND_METRICS[0]))
