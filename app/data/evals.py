"""Evaluation metrics shaped like per-step series: smoothing, relative time, groups.

Evaluations are few points per run (one per ``diagnostics.eval_every``), read whole;
the same controls as the per-step series apply to them (Compare's smoothing and
"Group by", the Run page's relative time), so a user never sees a control that is
silently ignored.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from app import transforms
from app.data.reads import eval_series, metric_names, metric_series
from app.data.tables import config_values


def eval_metric_series(
    run_ids: Sequence[str], name: str, *, smoothing: float = 0.0, x: str = "step"
) -> pd.DataFrame:
    """One evaluation metric of some runs: run_id, name, step, value, time, clock.

    ``smoothing`` is the debiased EMA weight over each run's evaluations; ``time`` is
    seconds since each run started and ``clock`` the wall clock (epoch ms), read off
    the run's per-step scalars at the evaluation's step (``transforms.time_at_steps``);
    only the column ``x`` names is filled, the other is NaN.
    """
    frame = eval_series(tuple(run_ids), [name]).copy()
    if frame.empty:
        return frame.assign(time=pd.Series(dtype=float), clock=pd.Series(dtype=float))
    frame = transforms.smooth_series(frame, smoothing) if smoothing > 0 else frame
    frame["time"] = frame["clock"] = float("nan")
    if x in ("time", "clock"):
        names = metric_names(tuple(run_ids))
        if names:
            clock, _ = metric_series(run_ids, [names[0]], max_points=5000 * len(run_ids))
            frame[x] = transforms.time_at_steps(frame, clock, column=x)
    return frame.reset_index(drop=True)


def grouped_eval_series(
    run_ids: Sequence[str], name: str, key: str, *, smoothing: float = 0.0, x: str = "step"
) -> pd.DataFrame:
    """Mean ± std of an evaluation metric over the runs sharing a value of config ``key``."""
    frame = eval_metric_series(run_ids, name, smoothing=smoothing, x=x)
    if frame.empty:
        return transforms.group_mean_std(frame, {}, x=x)
    groups = {r: f"{key}={v}" for r, v in config_values(run_ids, key).items()}
    if x == "time":  # runs do not share time stamps: bin relative time to whole seconds
        frame = frame.assign(time=frame["time"].round())
    return transforms.group_mean_std(frame, groups, x=x)
