"""Pure numeric transforms the dashboard applies to query results (no Streamlit, no I/O).

Smoothing, downsampling and group statistics live here (projections and centroid
angles are maths shared with the engine: ``sphere_engine.geometry``) so that
``app/data.py`` stays a thin cached layer and every transform is unit-testable on tiny
hand-made frames.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import datetime

import numpy as np
import pandas as pd

from sphere_engine.catalogue.norm_histogram import bin_edges, bin_index

#: Columns of a per-step metric series (as ``db.queries.metric_series`` returns them).
SERIES_COLUMNS = ["run_id", "name", "step", "value", "min", "max", "wall_time"]


def ema_debiased(values: Sequence[float] | np.ndarray, weight: float) -> np.ndarray:
    """TensorBoard's debiased exponential moving average of one series.

    ema_t = weight·ema_{t−1} + (1 − weight)·x_t with ema_0 = 0, reported as
    ema_t / (1 − weight^t), where t counts the finite values seen so far. Non-finite
    values pass through unchanged and do not advance the average. ``weight`` = 0
    returns the input.
    """
    x = np.asarray(values, dtype=float)
    if not 0.0 <= weight < 1.0:
        raise ValueError(f"smoothing weight {weight!r} must be in [0, 1)")
    if weight == 0.0 or x.size == 0:
        return x.copy()
    out = x.copy()
    finite = np.isfinite(x)
    if not finite.any():
        return out
    # A first-order IIR filter is the EMA with a zero start; vectorised, so full
    # resolution series of 10^5 points smooth in milliseconds. Imported here: scipy.signal
    # takes ~0.7 s to import and only smoothing needs it (not a page's first paint).
    from scipy.signal import lfilter

    ema = lfilter([1.0 - weight], [1.0, -weight], x[finite])
    t = np.arange(1, ema.size + 1, dtype=float)
    out[finite] = ema / (1.0 - weight**t)
    return out


def smooth_series(
    df: pd.DataFrame, weight: float, by: Sequence[str] = ("run_id", "name"), column: str = "value"
) -> pd.DataFrame:
    """Apply ``ema_debiased`` to ``column`` within each group, in step order.

    ``min``/``max`` (the raw band) are left as they are: they show the spread of the
    raw values around the smoothed line.
    """
    if df.empty or weight == 0.0:
        return df.copy()
    result = df.sort_values([*by, "step"], kind="stable").copy()
    parts = [
        ema_debiased(group[column].to_numpy(), weight)
        for _, group in result.groupby(list(by), sort=False)
    ]
    result[column] = np.concatenate(parts)
    return result.reset_index(drop=True)


def downsample(
    df: pd.DataFrame, max_points: int, by: Sequence[str] = ("run_id", "name"), x: str = "step"
) -> pd.DataFrame:
    """At most ``max_points`` rows per group, on one ``x`` grid shared by all groups.

    Each bucket keeps its last row (value, step, wall time, ...); where the frame has
    ``min``/``max`` columns (a metric series), the bucket keeps their minimum and
    maximum, so a min-max band and its spikes survive the reduction. Groups already
    short enough are returned whole.
    """
    if max_points < 1:
        raise ValueError(f"max_points must be at least 1, got {max_points}")
    if df.empty:
        return df.copy()
    by = list(by)
    counts = df.groupby(by, sort=False)[x].transform("size")
    if int(counts.max()) <= max_points:
        return df.sort_values([*by, x], kind="stable").reset_index(drop=True)
    lo, hi = float(df[x].min()), float(df[x].max())
    width = (hi - lo) / max_points if hi > lo else 1.0
    frame = df.copy()
    band = [c for c in ("min", "max") if c in frame]
    for column in band:
        if "value" in frame:
            frame[column] = frame[column].fillna(frame["value"])
    bucket = np.minimum(((frame[x].to_numpy(float) - lo) // width).astype(np.int64), max_points - 1)
    frame["_bucket"] = bucket
    frame = frame.sort_values([*by, x], kind="stable")
    long = counts.loc[frame.index] > max_points
    short = frame[~long].drop(columns="_bucket")
    grouped = frame[long].groupby([*by, "_bucket"], sort=True)
    reduced = grouped.last().reset_index()
    for column in band:
        reduced[column] = getattr(grouped[column], column)().to_numpy()
    reduced = reduced.drop(columns="_bucket")
    result = pd.concat([short, reduced[short.columns]], ignore_index=True)
    return result.sort_values([*by, x], kind="stable").reset_index(drop=True)


def cap_total_points(
    df: pd.DataFrame, max_points: int, by: Sequence[str] = ("run_id", "name"), x: str = "step"
) -> pd.DataFrame:
    """Downsample so that the whole frame (all groups together) has ≤ ``max_points`` rows."""
    if len(df) <= max_points:
        return df
    groups = max(df.groupby(list(by), sort=False).ngroups, 1)
    per_group = max(max_points // groups, 1)
    result = downsample(df, per_group, by=by, x=x)
    if len(result) > max_points:  # more groups than points: keep every k-th row
        step = math.ceil(len(result) / max_points)
        result = result.iloc[::step].reset_index(drop=True)
    return result


def epoch_seconds(value: object) -> float | None:
    """Seconds since the epoch of a timestamp (datetime, pandas Timestamp or number);
    None for a missing value."""
    if value is None or (not isinstance(value, (list, dict)) and pd.isna(value)):
        return None
    if isinstance(value, (datetime, pd.Timestamp)):
        return value.timestamp()
    return float(value)  # type: ignore[arg-type]


def wall_clock(df: pd.DataFrame) -> pd.Series:
    """Each row's wall time as epoch milliseconds: what a temporal (local time) axis reads."""
    return (df["wall_time"].astype(float) * 1000.0).rename("clock")


def relative_time(df: pd.DataFrame, starts: dict[str, float] | None = None) -> pd.Series:
    """Seconds since each run's start (``starts[run_id]``, else its first wall time)."""
    first = df.groupby("run_id")["wall_time"].transform("min")
    if starts:
        known = df["run_id"].map(starts)
        first = known.where(known.notna(), first)
    return (df["wall_time"] - first).astype(float)


def group_mean_std(df: pd.DataFrame, groups: dict[str, str], x: str = "step") -> pd.DataFrame:
    """Mean ± std over the runs of each group at each ``x`` (e.g. over seeds).

    ``df`` has run_id, ``x``, value; ``groups`` maps run_id → group label. Returns
    columns group, ``x``, mean, std (0 for a single run), lower, upper, runs.
    """
    columns = ["group", x, "mean", "std", "lower", "upper", "runs"]
    if df.empty:
        return pd.DataFrame(columns=columns)
    frame = df.assign(group=df["run_id"].map(groups).astype(str))
    stats = (
        frame.groupby(["group", x])["value"].agg(mean="mean", std="std", runs="count").reset_index()
    )
    stats["std"] = stats["std"].fillna(0.0)
    stats["lower"] = stats["mean"] - stats["std"]
    stats["upper"] = stats["mean"] + stats["std"]
    return stats[columns]


def best_rows(
    table: pd.DataFrame, higher_is_better: dict[str, bool], exclude: pd.Series | None = None
) -> dict[str, object]:
    """Index label of the best row per column (ties: the first), for highlighting;
    rows where ``exclude`` is True (runs that cannot be trusted) are never the best."""
    best: dict[str, object] = {}
    for column, higher in higher_is_better.items():
        if column not in table:
            continue
        values = pd.to_numeric(table[column], errors="coerce")
        if exclude is not None:
            values = values.mask(exclude.reindex(table.index, fill_value=False).astype(bool))
        if values.notna().any():
            best[column] = values.idxmax() if higher else values.idxmin()
    return best


def time_at_steps(frame: pd.DataFrame, reference: pd.DataFrame, column: str = "time") -> pd.Series:
    """Seconds since start at each row's step, read off a reference series of the same
    run (``reference`` has run_id, step, time: a per-step metric's relative time);
    ``column="clock"`` reads the wall clock (epoch ms) the same way.

    Tables without wall times (tracked-sample norms) and evaluations share the steps
    of the per-step scalars, so interpolating the scalars' step → time puts them on
    the same relative-time axis. NaN for a run without a reference.
    """
    result = pd.Series(np.nan, index=frame.index, dtype=float)
    if frame.empty or reference.empty:
        return result
    by_run = "run_id" in frame and "run_id" in reference
    runs = frame["run_id"].unique() if by_run else [None]
    for run in runs:
        rows = frame["run_id"] == run if by_run else pd.Series(True, index=frame.index)
        ref = reference[reference["run_id"] == run] if by_run else reference
        ref = ref.dropna(subset=[column]).groupby("step", sort=True)[column].max()
        if ref.empty:
            continue
        steps = frame.loc[rows, "step"].to_numpy(float)
        result.loc[rows] = np.interp(steps, ref.index.to_numpy(float), ref.to_numpy(float))
    return result


def histogram_cells(
    frame: pd.DataFrame,
    x: str = "step",
    index_of: Callable[[str], int | None] = bin_index,
    edges_of: Callable[[int], tuple[float, float]] = bin_edges,
) -> pd.DataFrame:
    """``norm_hist/<bin>`` series rows (or another fixed-bin family: ``index_of`` a key's
    bin, ``edges_of`` a bin's edges) → heatmap cells: run_id, x0, x1, lower, upper,
    fraction (one per logged step and non-empty bin; a cell spans to the next step).

    ``frame`` has run_id, name, ``x``, value; other names are ignored.
    """
    columns = ["run_id", "x0", "x1", "lower", "upper", "fraction"]
    bins = frame["name"].map(index_of) if len(frame) else pd.Series(dtype=object)
    rows = frame[bins.notna()].assign(bin=bins[bins.notna()].astype(int))
    if rows.empty:
        return pd.DataFrame(columns=columns)
    parts = []
    for run_id, part in rows.groupby("run_id", sort=True):
        xs = np.unique(part[x].to_numpy(float))
        gaps = np.diff(xs)
        width = np.append(gaps, gaps[-1] if len(gaps) else 1.0)
        ends = dict(zip(xs, xs + width, strict=True))
        edges = np.array([edges_of(b) for b in part["bin"]])
        parts.append(
            pd.DataFrame(
                {
                    "run_id": run_id,
                    "x0": part[x].to_numpy(float),
                    "x1": part[x].map(ends).to_numpy(float),
                    "lower": edges[:, 0],
                    "upper": edges[:, 1],
                    "fraction": part["value"].to_numpy(float),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)[columns]
