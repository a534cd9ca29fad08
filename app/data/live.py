"""Incremental reads for a live page: fetch only the points added since the last
refresh and merge them, per browser session, into what the page already holds.

The first read of a (run, metric names) is the usual downsampled one; every later one
asks ``db.queries.metric_series(..., since_step=last, since_bucket=...)`` for the new
points, grouped in DuckDB in buckets about as wide as the held grid (``tail_bucket``;
raw while the run is short), and appends them. When the merged frame outgrows twice its budget it is
downsampled here (``transforms.downsample`` keeps each bucket's min and max). A
``LiveSeries`` belongs to one watcher (a tab's live feed), so two tabs share no state.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import pandas as pd

from app import transforms
from app.data.cache import store
from app.data.reads import Totals, metric_series
from db import queries


class LiveSeries:
    """One run's per-step scalars (as ``metric_series``) for ``names``, read
    incrementally: the first ``read()`` is the usual downsampled one, each later one
    adds the points logged since. Held by one watcher (``app.panels.live_feed``)."""

    def __init__(self, run_id: str, names: Sequence[str], *, max_points: int) -> None:
        self.run_id = run_id
        self.names = sorted(set(names))
        self.max_points = max_points
        self.frame = pd.DataFrame()
        self.totals: Totals = {}
        self.last_step: int | None = None  # the largest step read so far
        self._read_once = False
        self._start: float | None = None

    def read(self) -> tuple[pd.DataFrame, Totals]:
        """The series with every point logged so far (downsampled to the budget)."""
        if not self._read_once or self.last_step is None:
            if self._read_once and queries.last_step(store(), self.run_id) is None:
                return self.frame, self.totals
            self.last_step, self.frame, totals = _full_read(
                self.run_id, self.names, self.max_points
            )
            self.totals, self._read_once = dict(totals), True
            return self.frame, self.totals
        tail = queries.metric_series(
            store(),
            [self.run_id],
            self.names,
            since_step=self.last_step,
            since_bucket=tail_bucket(self.last_step, self.max_points, len(self.names)),
        )
        if not tail.empty:
            self._append(tail)
        return self.frame, self.totals

    def _append(self, tail: pd.DataFrame) -> None:
        for pair, count in tail.attrs.get("total_points", {}).items():
            self.totals[pair] = self.totals.get(pair, 0) + int(count)
        tail = tail.copy()
        tail.attrs = {}
        started = self._started()
        tail["time"] = transforms.relative_time(tail, {self.run_id: started} if started else None)
        if not started and len(self.frame):  # no start time: continue the held clock
            first = float(self.frame["wall_time"].min())
            tail["time"] = tail["wall_time"] - first
        tail["clock"] = transforms.wall_clock(tail)
        kept = self.frame[self.frame["step"] <= self.last_step]
        merged = pd.concat([kept, tail[kept.columns]], ignore_index=True)
        series = max(merged.groupby("name").ngroups, 1)
        if len(merged) > 2 * self.max_points:
            merged = transforms.downsample(merged, max(self.max_points // series, 2))
        self.frame, self.last_step = merged, int(tail["step"].max())

    def _started(self) -> float | None:
        """The run's start (epoch seconds), read once it is known: it never changes,
        and reading the run's record took a tenth of each refresh."""
        if self._start is None:
            self._start = transforms.epoch_seconds(queries.get_run(store(), self.run_id).started_at)
        return self._start or None


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
