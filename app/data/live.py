"""Incremental reads for a live page: fetch only the points added since the last
refresh and merge them, per browser session, into what the page already holds.

The first read of a (run, metric names) is the usual downsampled one; every later one
asks ``db.queries.metric_series(..., since_step=last, since_bucket=...)`` for the new
points, grouped in DuckDB in buckets about as wide as the held grid (``tail_bucket``;
raw while the run is short), and appends them. When the merged frame outgrows twice its budget it is
downsampled here (``transforms.downsample`` keeps each bucket's min and max). The
held frames live in ``st.session_state`` (one per tab), so two tabs do not share
state, and a tab leaving the Run page drops nothing it still needs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from app import transforms
from app.data.cache import store
from app.data.reads import Totals, metric_series
from db import queries

STATE_KEY = "data.live_series"


@dataclass
class _Held:
    frame: pd.DataFrame
    totals: Totals
    last_step: int | None  # the largest step read so far
    max_points: int


def live_metric_series(
    run_id: str, names: Sequence[str], *, max_points: int
) -> tuple[pd.DataFrame, Totals]:
    """One run's per-step scalars (as ``metric_series``), read incrementally."""
    held_all: dict = st.session_state.setdefault(STATE_KEY, {})
    key = (run_id, tuple(sorted(set(names))))
    held = held_all.get(key)
    if held is None or held.max_points != max_points:
        last, frame, totals = _full_read(run_id, names, max_points)
        held = _Held(frame, dict(totals), last, max_points)
        held_all.clear()  # one live view per tab: forget other runs' and names' frames
        held_all[key] = held
        return held.frame, held.totals
    if held.last_step is None:
        if queries.last_step(store(), run_id) is None:
            return held.frame, held.totals
        held.last_step, held.frame, totals = _full_read(run_id, names, max_points)
        held.totals = dict(totals)
        return held.frame, held.totals
    tail = queries.metric_series(
        store(),
        [run_id],
        list(key[1]),
        since_step=held.last_step,
        since_bucket=tail_bucket(held.last_step, max_points, len(key[1])),
    )
    if tail.empty:
        return held.frame, held.totals
    for pair, count in tail.attrs.get("total_points", {}).items():
        held.totals[pair] = held.totals.get(pair, 0) + int(count)
    tail = tail.copy()
    tail.attrs = {}
    started = transforms.epoch_seconds(queries.get_run(store(), run_id).started_at)
    tail["time"] = transforms.relative_time(tail, {run_id: started} if started else None)
    if not started and len(held.frame):  # no start time: continue the held clock
        first = float(held.frame["wall_time"].min())
        tail["time"] = tail["wall_time"] - first
    tail["clock"] = transforms.wall_clock(tail)
    kept = held.frame[held.frame["step"] <= held.last_step]
    merged = pd.concat([kept, tail[kept.columns]], ignore_index=True)
    series = max(merged.groupby("name").ngroups, 1)
    if len(merged) > 2 * max_points:
        merged = transforms.downsample(merged, max(max_points // series, 2))
    held.frame, held.last_step = merged, int(tail["step"].max())
    return held.frame, held.totals


def mark_watched(run_id: str) -> None:
    """Tell the run's tracker that a live page shows it (``RunStore.mark_watched``): it
    flushes more often while marked, which is most of what a watcher waits for. A hint:
    a run deleted meanwhile is not an error here."""
    with contextlib.suppress(OSError, ValueError):
        store().mark_watched(run_id)


def tail_bucket(last_step: int, max_points: int, names: int) -> int:
    """Steps per row of the new points read after ``last_step``: about the width of the
    held grid (``max_points`` shared by ``names`` series), so a run logging hundreds of
    steps a second adds a few rows per series and refresh, not every value (which were
    read, merged and downsampled again on every refresh of every tab)."""
    per_series = max(max_points // max(names, 1), 2)
    return max(1, last_step // per_series)


# A flush can land between reading the last step and reading the series: the full read
# then holds steps past ``last``, which the next incremental read returns again, and the
# points logged would be counted twice. Rare (a read takes ~0.1 s, flushes come every
# second), so the read is simply repeated until the last step did not move across it.
_FULL_READ_TRIES = 3


def _full_read(
    run_id: str, names: Sequence[str], max_points: int
) -> tuple[int | None, pd.DataFrame, Totals]:
    """(last step, frame, totals) of one downsampled read, the last step read before the
    series and unchanged after it (unless a flush landed in each of the tries)."""
    for _ in range(_FULL_READ_TRIES):
        last = queries.last_step(store(), run_id)  # before the read: nothing falls between
        frame, totals = metric_series([run_id], names, max_points=max_points)
        if queries.last_step(store(), run_id) == last:
            break
    return last, frame, totals
