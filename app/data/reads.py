"""Cached reads over ``db.queries``: runs, names, series, final values, snapshots.

Smoothing is done here, not in the database: ``db.queries.metric_series`` downsamples
(each bucket keeps its last value), and an EMA over bucket values is not the EMA of
the series. So with smoothing on we fetch the full-resolution series, smooth it with
TensorBoard's debiased EMA (``app.transforms.ema_debiased``) and only then downsample
on the shared step grid.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from app import transforms
from app.charts.base import MAX_POINTS
from app.data.cache import LIST_TTL, LIVE_TTL, SLOW_LIVE_TTL, STATIC_TTL, store_read
from db import evaluation_state, queries

if TYPE_CHECKING:
    from db.evaluation_state import RunningEvaluation
    from db.records import RunRecord
    from db.store import RunStore

#: ``max_points`` that asks ``db.queries.metric_series`` for every logged point.
FULL_RESOLUTION = 10**9
#: Recorded points per (run_id, metric name).
Totals = dict[tuple[str, str], int]


# ----------------------------------------------------------------------------- runs


@store_read(LIVE_TTL)
def runs(
    store: RunStore,
    *,
    status: Sequence[str] = (),
    search: str = "",
    tag: str = "",
    sweep_id: str = "",
    kind: str = "",
    project: str | None = None,
    limit: int | None = None,
) -> pd.DataFrame:
    """Runs, newest first, from the run catalogue (the columns of
    ``db.queries.list_runs`` and the catalogue's, see ``db.catalogue.query.runs_frame``);
    archived runs left out. ``project``: one project's runs (None: every project);
    ``limit``: the newest that many; ``frame.attrs["total"]``: how many matched."""
    from db.catalogue.query import runs_frame

    frame, total = runs_frame(
        store, status=tuple(status), search=search, tag=tag or None, sweep_id=sweep_id or None,
        kind=kind or None, project=project, limit=limit,
    )  # fmt: skip
    frame.attrs["total"] = total
    return frame


@store_read(LIVE_TTL)
def run(store: RunStore, run_id: str) -> RunRecord:
    """One run's record; ValueError for an unknown id."""
    return queries.get_run(store, run_id)


@store_read(LIST_TTL)
def latest_metrics(
    store: RunStore, run_ids: Sequence[str], names: Sequence[str]
) -> dict[str, dict[str, float]]:
    """metric name → {run_id: last logged per-step value}."""
    if not run_ids:
        return {}
    frame = queries.metric_series(store, list(run_ids), list(names), max_points=1)
    if frame.empty:
        return {}
    last = frame.sort_values("step").groupby(["name", "run_id"])["value"].last()
    return {name: last[name].to_dict() for name in last.index.get_level_values(0).unique()}


@store_read(LIST_TTL)
def final_metrics(
    store: RunStore, run_ids: Sequence[str], names: Sequence[str] | None = None
) -> pd.DataFrame:
    """One row per run: run_id, name, then the last value of each metric, in columns
    qualified by their source (``eval:norm/var``, ``train:norm/var``)."""
    if not run_ids:
        return pd.DataFrame(columns=["run_id", "name"])
    return queries.final_metrics(store, list(run_ids), list(names) if names else None)


@store_read(STATIC_TTL)
def config_diff(store: RunStore, run_ids: Sequence[str]) -> pd.DataFrame:
    """Rows = dotted config keys whose values differ, one column per run."""
    return queries.config_diff(store, list(run_ids)) if run_ids else pd.DataFrame()


# ----------------------------------------------------------------------------- names


@store_read(SLOW_LIVE_TTL)
def metric_names(store: RunStore, run_ids: Sequence[str]) -> list[str]:
    """Per-step scalar names logged by any of the runs, sorted."""
    return list(queries.metric_names(store, list(run_ids))) if run_ids else []


@store_read(SLOW_LIVE_TTL)
def eval_names(store: RunStore, run_ids: Sequence[str]) -> list[str]:
    """Evaluation metric names of any of the runs, sorted."""
    return list(queries.eval_names(store, list(run_ids))) if run_ids else []


# ----------------------------------------------------------------------------- series


#: Runs whose series no longer change: they end so, and a rerun (queued again) or a
#: late outcome changes their status or end time, which key their cached series. A
#: lost run may still be logging (it can report its real outcome later): not here.
ENDED_STATUSES = frozenset({"finished", "failed", "cancelled"})


@store_read(LIVE_TTL)
def _series(
    store: RunStore, run_ids: tuple[str, ...], names: tuple[str, ...], smoothing: float, points: int
) -> tuple[pd.DataFrame, Totals]:
    return _read_series(store, run_ids, names, smoothing, points)


@store_read(STATIC_TTL, max_entries=64)
def _ended_series(
    store: RunStore,
    ended: tuple[tuple[str, str, str], ...],
    names: tuple[str, ...],
    smoothing: float,
    points: int,
) -> tuple[pd.DataFrame, Totals]:
    """``_series`` of runs that ended; ``ended``: each one's (run_id, status, end time),
    so a run that runs again is read anew."""
    return _read_series(store, tuple(r for r, _, _ in ended), names, smoothing, points)


def _ended_key(run_ids: Sequence[str]) -> tuple[tuple[str, str, str], ...] | None:
    """(run_id, status, end time) per run when every one of them ended, else None."""
    key = []
    for run_id in run_ids:
        try:
            record = run(run_id)
        except ValueError:  # an unknown run: the short-lived read says so
            return None
        if record.status not in ENDED_STATUSES:
            return None
        key.append((run_id, record.status, str(record.finished_at)))
    return tuple(key)


def _read_series(
    store: RunStore, run_ids: tuple[str, ...], names: tuple[str, ...], smoothing: float, points: int
) -> tuple[pd.DataFrame, Totals]:
    columns = [*transforms.SERIES_COLUMNS, "time", "clock"]
    if not run_ids or not names:
        return pd.DataFrame(columns=columns), {}
    if smoothing > 0:
        full = queries.metric_series(store, list(run_ids), list(names), max_points=FULL_RESOLUTION)
        totals = _totals(full)
        frame = transforms.downsample(transforms.smooth_series(full, smoothing), points)
    else:
        frame = queries.metric_series(store, list(run_ids), list(names), max_points=points)
        totals = _totals(frame)
    frame = frame.copy()
    frame.attrs = {}  # tuple-keyed totals cannot travel to the browser with the data
    if frame.empty:
        return pd.DataFrame(columns=columns), totals
    starts = {
        r: transforms.epoch_seconds(queries.get_run(store, r).started_at)
        for r in frame["run_id"].unique()
    }
    frame["time"] = transforms.relative_time(frame, {k: v for k, v in starts.items() if v})
    frame["clock"] = transforms.wall_clock(frame)
    return frame.reset_index(drop=True), totals


def _totals(frame: pd.DataFrame) -> Totals:
    """Recorded points per (run_id, name): ``attrs["total_points"]`` or the row counts."""
    totals = frame.attrs.get("total_points")
    if isinstance(totals, dict) and totals:
        return {(str(k[0]), str(k[1])): int(v) for k, v in totals.items()}
    if frame.empty:
        return {}
    counts = frame.groupby(["run_id", "name"]).size()
    return {(str(r), str(n)): int(c) for (r, n), c in counts.items()}


def metric_series(
    run_ids: Sequence[str],
    names: Sequence[str],
    *,
    smoothing: float = 0.0,
    max_points: int = MAX_POINTS,
) -> tuple[pd.DataFrame, Totals]:
    """Per-step scalars of some runs, ``max_points`` in all (split over the series).

    Returns (frame with run_id, name, step, value, min, max, wall_time, time, clock;
    the recorded points per (run_id, name)). ``smoothing`` is the EMA weight in [0, 1),
    applied to the full-resolution series before downsampling; ``time`` is seconds
    since each run started, ``clock`` the wall time in epoch milliseconds.
    """
    per_series = max(max_points // max(len(run_ids) * len(names), 1), 2)
    names = tuple(sorted(set(names)))
    ended = _ended_key(run_ids) if run_ids and names else None
    if ended is not None:  # kept for minutes: a page opened again reads nothing anew
        return _ended_series(ended, names, float(smoothing), per_series)
    return _series(tuple(run_ids), names, float(smoothing), per_series)


def points_total(totals: Totals, names: Sequence[str] | None = None) -> int:
    """Recorded points of some metric names (all when None), over all runs."""
    return sum(v for (_, name), v in totals.items() if names is None or name in names)


@store_read(SLOW_LIVE_TTL)
def eval_series(
    store: RunStore, run_ids: Sequence[str], names: Sequence[str] | None = None
) -> pd.DataFrame:
    """Evaluation metrics over steps: run_id, step, name, value."""
    if not run_ids:
        return pd.DataFrame(columns=["run_id", "step", "name", "value"])
    return queries.eval_series(store, list(run_ids), list(names) if names is not None else None)


@store_read(LIVE_TTL)
def _sample_norms(store: RunStore, run_id: str, max_points: int) -> tuple[pd.DataFrame, int]:
    frame = queries.sample_norms(store, run_id, max_points=max_points)
    totals = frame.attrs.get("total_points")
    if isinstance(totals, dict):
        total = int(sum(totals.values()))
    else:
        total = int(totals) if totals else len(frame)
    frame = frame.copy()
    frame.attrs = {}
    return frame, total


def sample_norms(run_id: str, max_points: int = MAX_POINTS) -> tuple[pd.DataFrame, int]:
    """Tracked-sample norms (step, sample, norm) and the recorded number of points."""
    return _sample_norms(run_id, max_points)


# ----------------------------------------------------------------------------- snapshots


@store_read(LIST_TTL)
def snapshot_steps(store: RunStore, run_id: str) -> list[int]:
    """Steps at which the run recorded test embeddings."""
    return [int(s) for s in queries.snapshot_steps(store, run_id)]


@store_read(STATIC_TTL, max_entries=16)
def _snapshot(store: RunStore, run_id: str, step: int) -> pd.DataFrame:
    return queries.snapshot(store, run_id, step)


def snapshot(run_id: str, step: int) -> pd.DataFrame:
    """point, label, norm, c0..c{d-1} of one snapshot (snapshots never change)."""
    return _snapshot(run_id, int(step))


def coordinate_columns(frame: pd.DataFrame) -> list[str]:
    """The coordinate columns c0..c{d-1} of a snapshot, in order."""
    cols = [c for c in frame.columns if c.startswith("c") and c[1:].isdigit()]
    return sorted(cols, key=lambda c: int(c[1:]))


def snapshot_coordinates(frame: pd.DataFrame) -> np.ndarray:
    """A snapshot's N × d coordinates as floats."""
    return frame[coordinate_columns(frame)].to_numpy(float)


# ----------------------------------------------------------------------------- curves
#: Prefix of the robustness evaluation keys (``robustness/<attack>/<metric>@eps=<ε>``).
ROBUSTNESS_PREFIX = "robustness/"


@store_read(LIVE_TTL)
def roc_curves(store: RunStore, run_ids: Sequence[str]) -> pd.DataFrame:
    """Each run's latest verification ROC: run_id, step, point, far, tar."""
    if not run_ids:
        return pd.DataFrame(columns=["run_id", "step", "point", "far", "tar"])
    frame = queries.latest_curves(store, list(run_ids), "verification/roc")
    return frame.rename(columns={"x": "far", "y": "tar"})


@store_read(LIVE_TTL)
def robustness_values(store: RunStore, run_ids: Sequence[str]) -> pd.DataFrame:
    """Each run's robustness values at its latest evaluation that had them: run_id,
    step, attack, metric (``accuracy`` or ``recall@1``), epsilon, value."""
    columns = ["run_id", "step", "attack", "metric", "epsilon", "value"]
    if not run_ids:
        return pd.DataFrame(columns=columns)
    known = queries.eval_names(store, list(run_ids))
    names = [n for n in known if n.startswith(ROBUSTNESS_PREFIX)]
    if not names:
        return pd.DataFrame(columns=columns)
    frame = queries.eval_series(store, list(run_ids), names)
    last = frame.groupby("run_id")["step"].transform("max")
    frame = frame[frame["step"] == last]
    parts = (
        frame["name"]
        .str.removeprefix(ROBUSTNESS_PREFIX)
        .str.extract(r"^(?P<attack>[^/]+)/(?P<metric>.+)@eps=(?P<epsilon>[^@]+)$")
    )
    frame = pd.concat([frame.reset_index(drop=True), parts.reset_index(drop=True)], axis=1)
    frame["epsilon"] = pd.to_numeric(frame["epsilon"], errors="coerce")
    return frame.dropna(subset=["epsilon"])[columns].reset_index(drop=True)


# ----------------------------------------------------------------------------- files


@store_read(LIVE_TTL)
def run_log_tail(store: RunStore, run_id: str, max_bytes: int = 20_000) -> str:
    """The end of the run's own log (stdout, stderr, logging of its process)."""
    return queries.run_log_tail(store, run_id, max_bytes)


@store_read(LIVE_TTL)
def running_evaluation(store: RunStore, run_id: str) -> RunningEvaluation | None:
    """The run's oldest evaluation in flight (``db.evaluation_state``), or None."""
    return evaluation_state.running_evaluation(store, run_id)


@store_read(LIST_TTL)
def checkpoints(store: RunStore, run_id: str) -> pd.DataFrame:
    """The run's checkpoint files: step, path, wall_time, size (bytes; NaN if gone)."""
    frame = queries.checkpoints(store, run_id)
    sizes = [Path(p).stat().st_size if Path(p).is_file() else np.nan for p in frame["path"]]
    return frame.assign(size=sizes)
