"""The dashboard's one data-access module: cached reads over ``db.queries`` and the actions.

Pages call these functions and never touch SQL, the store's files or torch. The store
is a ``st.cache_resource`` (one per ``SPHERESCOPE_HOME``); reads are
``st.cache_data(ttl=...)`` with short TTLs for what changes while runs train and long
ones for what never changes (snapshots). Actions (launch, cancel, delete, tags, notes)
clear the cached listings so the next render shows their effect.

Smoothing is done here, not in the database: ``db.queries.metric_series`` downsamples
(each bucket keeps its last value), and an EMA over bucket values is not the EMA of
the series. So with smoothing on we fetch the full-resolution series, smooth it with
TensorBoard's debiased EMA (``app.transforms.ema_debiased``) and only then downsample
on the shared step grid.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from app import transforms
from app.charts import MAX_POINTS
from db.config_diff import flatten

#: ``max_points`` that asks ``db.queries.metric_series`` for every logged point.
FULL_RESOLUTION = 10**9
LIVE_TTL = 1.0  # seconds; live charts refresh every 2 s and must show points within 3 s
LIST_TTL = 2.0
STATIC_TTL = 300.0
ACTIVE_STATUSES = ("queued", "running")


# ----------------------------------------------------------------------------- the store


def home() -> str:
    """The store's root folder as configured (``SPHERESCOPE_HOME``; "" = the default)."""
    return os.environ.get("SPHERESCOPE_HOME", "")


@st.cache_resource(show_spinner=False)
def _store(root: str) -> Any:
    from db.store import RunStore

    return RunStore(root or None)


def store() -> Any:
    """The ``RunStore`` for the configured home (one per process and home)."""
    return _store(home())


def _queries() -> Any:
    from db import queries

    return queries


# ----------------------------------------------------------------------------- runs


@st.cache_data(ttl=LIVE_TTL, show_spinner=False)
def _runs(
    root: str, status: tuple[str, ...], search: str, tag: str, sweep_id: str, kind: str
) -> pd.DataFrame:
    q = _queries()
    frame = q.list_runs(
        _store(root),
        search=search or None,
        tag=tag or None,
        sweep_id=sweep_id or None,
        kind=kind or None,
    )
    if status:
        frame = frame[frame["status"].isin(status)]
    return frame.reset_index(drop=True)


def runs(
    *,
    status: Sequence[str] = (),
    search: str = "",
    tag: str = "",
    sweep_id: str = "",
    kind: str = "",
) -> pd.DataFrame:
    """Runs, newest first (the columns of ``db.queries.list_runs``)."""
    frame = _runs(home(), tuple(status), search, tag, sweep_id, kind)
    if "created_at" in frame and len(frame):
        frame = frame.sort_values("created_at", ascending=False, kind="stable")
    return frame.reset_index(drop=True)


@st.cache_data(ttl=LIVE_TTL, show_spinner=False)
def _run(root: str, run_id: str) -> Any:
    return _queries().get_run(_store(root), run_id)


def run(run_id: str) -> Any:
    """One run's record (``db.records.RunRecord``); ValueError for an unknown id."""
    return _run(home(), run_id)


def run_labels(frame: pd.DataFrame) -> dict[str, str]:
    """run_id → "name · run_id" for selectors and legends."""
    return {
        r: (f"{n} · {r}" if n and n != r else r)
        for r, n in zip(frame["run_id"], frame["name"], strict=True)
    }


def preferred_runs(frame: pd.DataFrame, count: int = 1) -> list[str]:
    """The newest training runs that have (or are producing) results, for default picks.

    Falls back to the newest runs of any kind and status.
    """
    if frame.empty:
        return []
    useful = frame[
        (frame["kind"] == "train") & frame["status"].isin(("running", "finished", "cancelled"))
    ]
    chosen = useful["run_id"].tolist()[:count]
    rest = [r for r in frame["run_id"] if r not in chosen]
    return (chosen + rest)[:count]


def elapsed_seconds(row: Any, now: float | None = None) -> float | None:
    """Seconds a run has been (or was) running: finished − started, or now − started."""
    started = _epoch(_get(row, "started_at"))
    if started is None:
        return None
    finished = _epoch(_get(row, "finished_at"))
    end = finished if finished is not None else (now if now is not None else time.time())
    return max(end - started, 0.0)


def runs_table(
    frame: pd.DataFrame,
    metrics: Sequence[str] = ("loss/total", "norm/var"),
    now: float | None = None,
) -> pd.DataFrame:
    """The Runs page's table: one row per run with progress, elapsed time, key metrics."""
    columns = [
        "name",
        "status",
        "progress",
        "elapsed",
        "device",
        *metrics,
        "eval R@1",
        "kind",
        "tags",
        "sweep_id",
        "created",
        "message",
        "run_id",
    ]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    table = pd.DataFrame(
        {
            "run_id": frame["run_id"],
            "name": frame["name"],
            "status": frame["status"],
            "progress": [
                progress_fraction(s, t)
                for s, t in zip(frame["progress_step"], frame["progress_total"], strict=True)
            ],
            "elapsed": [elapsed_seconds(row, now) for _, row in frame.iterrows()],
            "device": frame["device"].fillna(""),
            "kind": frame["kind"],
            "tags": [
                ", ".join(t) if isinstance(t, (list, tuple, np.ndarray)) else ""
                for t in frame["tags"]
            ],
            "sweep_id": frame["sweep_id"].fillna(""),
            "created": frame["created_at"],
            "message": frame["status_message"].fillna(""),
        }
    )
    latest = latest_metrics(tuple(frame["run_id"]), tuple(metrics))
    for metric in metrics:
        table[metric] = table["run_id"].map(latest.get(metric, {}))
    finals = final_metrics(tuple(frame["run_id"]))
    table["eval R@1"] = table["run_id"].map(
        finals.set_index("run_id")["recall@1"].to_dict() if "recall@1" in finals else {}
    )
    return table[columns]


def progress_fraction(step: Any, total: Any) -> float:
    if total is None or pd.isna(total) or not total or step is None or pd.isna(step):
        return 0.0
    return float(min(max(step / total, 0.0), 1.0))


def _get(row: Any, key: str) -> Any:
    return row.get(key) if hasattr(row, "get") else getattr(row, key, None)


def _epoch(value: Any) -> float | None:
    if value is None or (not isinstance(value, (list, dict)) and pd.isna(value)):
        return None
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, pd.Timestamp):
        return value.timestamp()
    return float(value)


@st.cache_data(ttl=LIST_TTL, show_spinner=False)
def _latest_metrics(
    root: str, run_ids: tuple[str, ...], names: tuple[str, ...]
) -> dict[str, dict[str, float]]:
    if not run_ids:
        return {}
    frame = _queries().metric_series(_store(root), list(run_ids), list(names), max_points=1)
    if frame.empty:
        return {}
    last = frame.sort_values("step").groupby(["name", "run_id"])["value"].last()
    return {name: last[name].to_dict() for name in last.index.get_level_values(0).unique()}


def latest_metrics(run_ids: tuple[str, ...], names: tuple[str, ...]) -> dict[str, dict[str, float]]:
    """metric name → {run_id: last logged value}."""
    return _latest_metrics(home(), tuple(run_ids), tuple(names))


def sweeps() -> list[str]:
    """Sweep ids that have at least one run, newest first."""
    frame = runs()
    if frame.empty:
        return []
    return [s for s in frame["sweep_id"].dropna().unique().tolist() if s]


def tags() -> list[str]:
    frame = runs()
    found: set[str] = set()
    for value in frame.get("tags", []):
        if isinstance(value, (list, tuple, np.ndarray)):
            found.update(str(t) for t in value)
    return sorted(found)


# ----------------------------------------------------------------------------- series


@st.cache_data(ttl=LIVE_TTL, show_spinner=False)
def _metric_names(root: str, run_ids: tuple[str, ...]) -> list[str]:
    return list(_queries().metric_names(_store(root), list(run_ids))) if run_ids else []


def metric_names(run_ids: Sequence[str]) -> list[str]:
    """Per-step scalar names logged by any of the runs, sorted."""
    return _metric_names(home(), tuple(run_ids))


@st.cache_data(ttl=LIVE_TTL, show_spinner=False)
def _eval_names(root: str, run_ids: tuple[str, ...]) -> list[str]:
    return list(_queries().eval_names(_store(root), list(run_ids))) if run_ids else []


def eval_names(run_ids: Sequence[str]) -> list[str]:
    """Evaluation metric names of any of the runs, sorted."""
    return _eval_names(home(), tuple(run_ids))


Totals = dict[tuple[str, str], int]


@st.cache_data(ttl=LIVE_TTL, show_spinner=False)
def _series(
    root: str, run_ids: tuple[str, ...], names: tuple[str, ...], smoothing: float, max_points: int
) -> tuple[pd.DataFrame, Totals]:
    columns = [*transforms.SERIES_COLUMNS, "time"]
    if not run_ids or not names:
        return pd.DataFrame(columns=columns), {}
    q, store_ = _queries(), _store(root)
    if smoothing > 0:
        full = q.metric_series(store_, list(run_ids), list(names), max_points=FULL_RESOLUTION)
        totals = _totals(full)
        frame = transforms.smooth_series(full, smoothing)
        frame = transforms.downsample(frame, max_points)
    else:
        frame = q.metric_series(store_, list(run_ids), list(names), max_points=max_points)
        totals = _totals(frame)
    frame = frame.copy()
    frame.attrs = {}  # tuple-keyed totals cannot travel to the browser with the data
    if frame.empty:
        return pd.DataFrame(columns=columns), totals
    starts = {r: _epoch(q.get_run(store_, r).started_at) for r in frame["run_id"].unique()}
    frame["time"] = transforms.relative_time(frame, {k: v for k, v in starts.items() if v})
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


def points_total(totals: Totals, names: Sequence[str] | None = None) -> int:
    """Recorded points of some metric names (all when None), over all runs."""
    return sum(v for (_, name), v in totals.items() if names is None or name in names)


def metric_series(
    run_ids: Sequence[str],
    names: Sequence[str],
    *,
    smoothing: float = 0.0,
    max_points: int = MAX_POINTS,
) -> tuple[pd.DataFrame, Totals]:
    """Per-step scalars of some runs, ``max_points`` in all (split over the series).

    Returns (frame with run_id, name, step, value, min, max, wall_time, time; the
    recorded points per (run_id, name)). ``smoothing`` is the EMA weight in [0, 1),
    applied to the full-resolution series before downsampling; ``time`` is seconds
    since each run started.
    """
    per_series = max(max_points // max(len(run_ids) * len(names), 1), 2)
    return _series(home(), tuple(run_ids), tuple(sorted(set(names))), float(smoothing), per_series)


def to_wide(frame: pd.DataFrame) -> pd.DataFrame:
    """A long series frame of one run → one row per step, one column per metric name."""
    if frame.empty:
        return pd.DataFrame(columns=["step", "time"])
    wide = frame.pivot_table(index="step", columns="name", values="value", aggfunc="last")
    times = frame.groupby("step")["time"].last()
    wide = wide.join(times).reset_index()
    wide.columns.name = None
    return wide


@st.cache_data(ttl=LIVE_TTL, show_spinner=False)
def _eval_series(
    root: str,
    run_ids: tuple[str, ...],
    names: tuple[str, ...] | None,
) -> pd.DataFrame:
    if not run_ids:
        return pd.DataFrame(columns=["run_id", "step", "name", "value"])
    return _queries().eval_series(
        _store(root), list(run_ids), list(names) if names is not None else None
    )


def eval_series(run_ids: Sequence[str], names: Sequence[str] | None = None) -> pd.DataFrame:
    """Evaluation metrics over steps: run_id, step, name, value."""
    return _eval_series(home(), tuple(run_ids), tuple(names) if names is not None else None)


@st.cache_data(ttl=LIVE_TTL, show_spinner=False)
def _sample_norms(root: str, run_id: str, max_points: int) -> tuple[pd.DataFrame, int]:
    frame = _queries().sample_norms(_store(root), run_id, max_points=max_points)
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
    return _sample_norms(home(), run_id, max_points)


# ----------------------------------------------------------------------------- comparisons

#: The SEC paper's table columns: (metric name, column title, higher is better).
PAPER_COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("nmi", "NMI", True),
    ("f1", "F1", True),
    ("recall@1", "R@1", True),
    ("map@r", "MAP@R", True),
    ("norm/var", "mean norm var", False),
)


@st.cache_data(ttl=LIST_TTL, show_spinner=False)
def _final_metrics(root: str, run_ids: tuple[str, ...]) -> pd.DataFrame:
    if not run_ids:
        return pd.DataFrame(columns=["run_id", "name"])
    return _queries().final_metrics(_store(root), list(run_ids))


def final_metrics(run_ids: Sequence[str]) -> pd.DataFrame:
    """One row per run: run_id, name, then the last value of every metric."""
    return _final_metrics(home(), tuple(run_ids))


def paper_table(run_ids: Sequence[str]) -> pd.DataFrame:
    """Final metrics in the SEC paper's layout: run, NMI, F1, R@1, MAP@R, mean norm var.

    Retrieval and clustering scores are shown in percent, as in the paper.
    """
    finals = final_metrics(run_ids)
    columns = ["run_id", "run", *[title for _, title, _ in PAPER_COLUMNS]]
    if finals.empty:
        return pd.DataFrame(columns=columns)
    table = pd.DataFrame({"run_id": finals["run_id"], "run": finals["name"]})
    for metric, title, _ in PAPER_COLUMNS:
        values = pd.to_numeric(finals[metric], errors="coerce") if metric in finals else np.nan
        table[title] = values * 100.0 if metric != "norm/var" else values
    return table[columns].reset_index(drop=True)


def paper_best() -> dict[str, bool]:
    """Column title → higher is better, for highlighting the best value per column."""
    return {title: higher for _, title, higher in PAPER_COLUMNS}


@st.cache_data(ttl=STATIC_TTL, show_spinner=False)
def _config_diff(root: str, run_ids: tuple[str, ...]) -> pd.DataFrame:
    if not run_ids:
        return pd.DataFrame()
    return _queries().config_diff(_store(root), list(run_ids))


def config_diff(run_ids: Sequence[str]) -> pd.DataFrame:
    """Rows = dotted config keys whose values differ, one column per run."""
    return _config_diff(home(), tuple(run_ids))


def flatten_config(config: dict[str, Any]) -> dict[str, Any]:
    """{"optimizer": {"lr": 0.1}} → {"optimizer.lr": 0.1}: the store's own flattening,
    so the launch form, grouping and the config diff name keys the same way."""
    return flatten(config)


def config_values(run_ids: Sequence[str], key: str) -> dict[str, str]:
    """run_id → the (string) value of dotted config ``key`` (for grouping runs)."""
    frame = runs()
    frame = frame[frame["run_id"].isin(run_ids)]
    result = {}
    for run_id, config in zip(frame["run_id"], frame["config"], strict=True):
        value = flatten_config(config or {}).get(key, "–")
        result[run_id] = str(value)
    return result


def grouped_series(
    run_ids: Sequence[str], name: str, key: str, *, smoothing: float = 0.0, x: str = "step"
) -> tuple[pd.DataFrame, int]:
    """Mean ± std over the runs sharing a value of config ``key`` (e.g. over seeds)."""
    frame, totals = metric_series(run_ids, [name], smoothing=smoothing)
    total = points_total(totals)
    if frame.empty:
        return transforms.group_mean_std(frame, {}, x=x), total
    groups = {r: f"{key}={v}" for r, v in config_values(run_ids, key).items()}
    if x == "time":  # runs do not share time stamps: bin relative time to whole seconds
        frame = frame.assign(time=frame["time"].round())
    return transforms.group_mean_std(frame, groups, x=x), total


def series_csv(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


# ----------------------------------------------------------------------------- geometry


@st.cache_data(ttl=LIST_TTL, show_spinner=False)
def _snapshot_steps(root: str, run_id: str) -> list[int]:
    return [int(s) for s in _queries().snapshot_steps(_store(root), run_id)]


def snapshot_steps(run_id: str) -> list[int]:
    """Steps at which the run recorded test embeddings."""
    return _snapshot_steps(home(), run_id)


@st.cache_data(ttl=STATIC_TTL, show_spinner=False, max_entries=16)
def _snapshot(root: str, run_id: str, step: int) -> pd.DataFrame:
    return _queries().snapshot(_store(root), run_id, step)


def snapshot(run_id: str, step: int) -> pd.DataFrame:
    """point, label, norm, c0..c{d-1} of one snapshot (snapshots never change)."""
    return _snapshot(home(), run_id, int(step))


def coordinate_columns(frame: pd.DataFrame) -> list[str]:
    cols = [c for c in frame.columns if c.startswith("c") and c[1:].isdigit()]
    return sorted(cols, key=lambda c: int(c[1:]))


@st.cache_data(ttl=STATIC_TTL, show_spinner=False, max_entries=16)
def _pca(root: str, run_id: str, step: int) -> tuple[pd.DataFrame, list[float]]:
    frame = _snapshot(root, run_id, step)
    coords = frame[coordinate_columns(frame)].to_numpy(float)
    projected, ratio = transforms.pca_2d(coords)
    result = pd.DataFrame(
        {"pc1": projected[:, 0], "pc2": projected[:, 1], "label": frame["label"].to_numpy()}
    )
    return result, [float(r) for r in ratio]


def pca(run_id: str, step: int) -> tuple[pd.DataFrame, list[float]]:
    """2-D PCA of a snapshot (pc1, pc2, label) and the explained-variance ratios."""
    return _pca(home(), run_id, int(step))


@st.cache_data(ttl=STATIC_TTL, show_spinner=False, max_entries=16)
def _centroid_angles(root: str, run_id: str, step: int) -> tuple[np.ndarray, list]:
    frame = _snapshot(root, run_id, step)
    angles, classes = transforms.class_centroid_angles(
        frame[coordinate_columns(frame)].to_numpy(float), frame["label"].to_numpy()
    )
    return angles, classes.tolist()


def centroid_angles(run_id: str, step: int) -> tuple[np.ndarray, list]:
    """K × K angles (degrees) between class centroids, and the class labels."""
    return _centroid_angles(home(), run_id, int(step))


def fixed_head(config: dict[str, Any]) -> str | None:
    """The polytope kind when the run's objective is a fixed head, else None."""
    from sphere_engine.config import FIXED_HEADS

    objective = (config or {}).get("objective", {})
    if objective.get("kind") == "head" and objective.get("name") in FIXED_HEADS:
        return str(objective["name"])
    return None


@st.cache_data(ttl=STATIC_TTL, show_spinner=False)
def polytope_vertices(kind: str, num_classes: int, dim: int) -> pd.DataFrame:
    """The fixed head's unit vertices as a frame (label, c0..c{dim-1}); torch loaded here."""
    from sphere_engine.heads import polytope_vertices as vertices

    array = vertices(kind, int(num_classes), int(dim)).detach().cpu().numpy()
    frame = pd.DataFrame(array, columns=[f"c{i}" for i in range(array.shape[1])])
    frame.insert(0, "label", np.arange(len(frame)))
    return frame


def head_vertices(config: dict[str, Any], snapshot_frame: pd.DataFrame) -> pd.DataFrame | None:
    """Vertices to draw for a fixed-head run (scaled to the median norm), else None."""
    kind = fixed_head(config)
    if kind is None or snapshot_frame.empty:
        return None
    coords = coordinate_columns(snapshot_frame)
    num_classes = int(snapshot_frame["label"].max()) + 1
    frame = polytope_vertices(kind, num_classes, len(coords)).copy()
    frame[coords] = frame[coords] * float(np.median(snapshot_frame["norm"]))
    return frame


# ----------------------------------------------------------------------------- launch form


@st.cache_resource(show_spinner="Loading the component registries…")
def registries() -> dict[str, Any]:
    """The registries the launch form is built from (imports torch once per process)."""
    from sphere_engine.data import DATASETS
    from sphere_engine.heads import HEADS
    from sphere_engine.losses import LOSSES
    from sphere_engine.models import MODELS
    from sphere_engine.regularizers import REGULARIZERS

    return {
        "data": DATASETS,
        "model": MODELS,
        "head": HEADS,
        "loss": LOSSES,
        "regularizer": REGULARIZERS,
    }


def component_names(kind: str) -> list[str]:
    """Registered names of one kind (data, model, head, loss, regularizer)."""
    names = registries()[kind].names()
    return ["none", *names] if kind == "regularizer" else names


def component_params(kind: str, name: str) -> dict[str, Any]:
    """name's options: {option: Param(default, annotation, help)}; {} for "none"."""
    if kind == "regularizer" and name == "none":
        return {}
    return registries()[kind].params(name)


def validate_config(config: dict[str, Any]) -> dict[str, Any]:
    """Validate with ``RunConfig.from_dict`` (raises ValueError naming the field)."""
    from sphere_engine.config import RunConfig

    return RunConfig.from_dict(config).to_dict()


def default_config() -> dict[str, Any]:
    from sphere_engine.config import RunConfig

    return RunConfig().to_dict()


# ----------------------------------------------------------------------------- actions


def _clear_listings() -> None:
    _runs.clear()
    _run.clear()
    _latest_metrics.clear()
    _final_metrics.clear()


def launch_runs(
    configs: Sequence[dict[str, Any]],
    *,
    names: Sequence[str | None] = (),
    tags: Sequence[str] = (),
    sweep_id: str | None = None,
) -> list[str]:
    """Validate and enqueue each config (one worker job per run); returns the run ids."""
    import worker

    validated = [validate_config(c) for c in configs]
    names = list(names) or [None] * len(validated)
    ids = [
        worker.launch(config, name=name, tags=tuple(tags), sweep_id=sweep_id, store=store())
        for config, name in zip(validated, names, strict=True)
    ]
    _clear_listings()
    return ids


def launch_sweep(
    base: dict[str, Any],
    grid: dict[str, list[Any]],
    seeds: Sequence[int],
    *,
    name: str | None = None,
    tags: Sequence[str] = (),
) -> tuple[str, list[str]]:
    """Enqueue every grid combination × seed; returns (sweep id, run ids)."""
    import worker

    validate_config(base)
    sweep_id, ids = worker.launch_sweep(
        base, grid, list(seeds), name=name or None, tags=tuple(tags), store=store()
    )
    _clear_listings()
    return sweep_id, list(ids)


def new_sweep_id(label: str) -> str:
    """An id grouping the runs of one preset (sortable by time)."""
    slug = "".join(ch if ch.isalnum() else "-" for ch in label.lower()).strip("-")[:24]
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{slug}"


def cancel_run(run_id: str) -> None:
    import worker

    worker.cancel(run_id, store=store())
    _clear_listings()


def delete_run(run_id: str) -> None:
    store().delete_run(run_id)
    _clear_listings()


def set_tags(run_id: str, tag_list: Sequence[str]) -> None:
    store().set_tags(run_id, [t.strip() for t in tag_list if t.strip()])
    _clear_listings()


def set_notes(run_id: str, notes: str) -> None:
    store().set_notes(run_id, notes)
    _clear_listings()


def is_active(status: str) -> bool:
    return status in ACTIVE_STATUSES
