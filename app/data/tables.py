"""Table shaping for the pages: labels, default picks, the Runs table, grouping."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from app import transforms
from app.data.executor import runs_on, scheduler_note
from app.data.findings import badges, table_findings, untrusted_flags
from app.data.projects import selected_project, sweep_ids, tag_names
from app.data.reads import metric_series, points_total, runs
from app.data.run_metrics import key_values
from app.data.status_texts import waiting_note
from db.config_diff import flatten
from sphere_engine.catalogue import RUNS_TABLE, Source, column_key, header, split_column_key
from sphere_engine.catalogue import label as metric_label

ACTIVE_STATUSES = ("queued", "running")
#: The Runs table shows the newest this many matching runs (the run catalogue answers
#: the filters for all of them; the browser never receives a lab's whole store).
RUNS_SHOWN = 200
#: The Runs table's metric columns, from the catalogue: "train:loss/total", ...
KEY_COLUMNS: tuple[str, ...] = tuple(column_key(source, key) for source, key in RUNS_TABLE)


def is_active(status: str) -> bool:
    return status in ACTIVE_STATUSES


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


def progress_fraction(step: object, total: object) -> float:
    """step / total clipped to [0, 1]; 0 when either is unknown."""
    if total is None or pd.isna(total) or not total or step is None or pd.isna(step):
        return 0.0
    return float(min(max(step / total, 0.0), 1.0))  # type: ignore[operator]


def run_progress(status: str, step: object, total: object) -> float:
    """The progress bar's fraction: a finished run (or analysis) is complete even when
    it logged no step count."""
    return 1.0 if status == "finished" else progress_fraction(step, total)


def elapsed_seconds(row: Any, now: float | None = None) -> float | None:
    """Seconds a run has been (or was) running: finished − started, or now − started.

    ``row``: a run record, a frame row or a dict with started_at / finished_at.
    """
    started = transforms.epoch_seconds(_get(row, "started_at"))
    if started is None:
        return None
    finished = transforms.epoch_seconds(_get(row, "finished_at"))
    end = finished if finished is not None else (now if now is not None else time.time())
    return max(end - started, 0.0)


def _get(row: Any, key: str) -> object:
    return row.get(key) if hasattr(row, "get") else getattr(row, key, None)


def column_label(column: str) -> str:
    """A source-qualified column key ("eval:norm/var") as a readable header."""
    try:
        source, key = split_column_key(column)
    except ValueError:
        return column
    return header(key, source)


def metric_key(column: str) -> str:
    """The logged key of a source-qualified column ("eval:recall@1" → "recall@1")."""
    try:
        return split_column_key(column)[1]
    except ValueError:
        return column


def key_column_labels() -> dict[str, str]:
    """The Runs table's metric columns → their headers ("norm var (training batch)")."""
    return {column: column_label(column) for column in KEY_COLUMNS}


def runs_table(frame: pd.DataFrame, now: float | None = None) -> pd.DataFrame:
    """The Runs page's table: one row per run with progress, elapsed time and the
    catalogue's key metrics (columns ``KEY_COLUMNS``, qualified by their source)."""
    columns = [
        "name", "status", "untrusted", "findings", "progress", "elapsed", "device", "runs on",
        *KEY_COLUMNS, "kind", "tags",
        "sweep_id", "created", "message", "run_id",
    ]  # fmt: skip
    if frame.empty:
        return pd.DataFrame(columns=columns)
    records = frame.reindex(  # executor: absent from frames made before runs had one
        columns=["status", "kind", "config", "started_at", "finished_at", "executor"]
    ).to_dict("records")
    table = pd.DataFrame(
        {
            "run_id": frame["run_id"],
            "name": frame["name"],
            "status": frame["status"],
            "progress": [
                run_progress(status, step, total)
                for status, step, total in zip(
                    frame["status"], frame["progress_step"], frame["progress_total"], strict=True
                )
            ],
            "elapsed": [elapsed_seconds(row, now) for row in records],
            "device": frame["device"].fillna(""),
            "runs on": [runs_on(row) for row in records],
            "kind": frame["kind"],
            "tags": [
                ", ".join(t) if isinstance(t, (list, tuple, np.ndarray)) else ""
                for t in frame["tags"]
            ],
            "sweep_id": frame["sweep_id"].fillna(""),
            "created": frame["created_at"],
            "message": [
                waiting_note(row)
                or scheduler_note(row)
                or (message if isinstance(message, str) else "")
                for row, message in zip(records, frame["status_message"], strict=True)
            ],
        }
    )
    # Last logged value of each per-step column and last evaluation of the others, read
    # once per ended run (``run_metrics``): what keeps the page fast with 500 runs.
    values = key_values(frame, KEY_COLUMNS)
    for column in KEY_COLUMNS:
        table[column] = pd.to_numeric(values[column].to_numpy(), errors="coerce")
    # Evaluated now: the running runs only. A queued run has logged nothing, and each
    # evaluation reads the run's series (bench/runs_page.py times it apart: ~0.1 s a
    # run, cold; queued runs were a third of the table's time there).
    live = set(frame.loc[frame["status"] == "running", "run_id"])
    found = table_findings(frame, live)
    table["findings"] = [badges(row) for row in found]
    # a critical finding: the result cannot be trusted (left out of rankings unless asked)
    table["untrusted"] = untrusted_flags(found)
    return table[columns]


def sweeps() -> list[str]:
    """Sweep ids that have at least one run (of the chosen project), newest first."""
    return sweep_ids(project=selected_project())


def tags() -> list[str]:
    """Every tag of any run (of the chosen project), sorted."""
    return tag_names(project=selected_project())


def metric_choice_label(choice: str) -> str:
    """A Compare metric choice ("norm/var" or "eval: norm/var") with its source named."""
    if choice.startswith("eval: "):
        return metric_label(choice.removeprefix("eval: "), Source.EVALUATION)
    return metric_label(choice, Source.TRAINING_BATCH)


def to_wide(frame: pd.DataFrame) -> pd.DataFrame:
    """A long series frame of one run → one row per step, one column per metric name."""
    if frame.empty:
        return pd.DataFrame(columns=["step", "time"])
    wide = frame.pivot_table(index="step", columns="name", values="value", aggfunc="last")
    times = frame.groupby("step")["time"].last()
    wide = wide.join(times).reset_index()
    wide.columns.name = None
    return wide


def flatten_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """{"optimizer": {"lr": 0.1}} → {"optimizer.lr": 0.1}: the store's own flattening,
    so the launch form, grouping and the config diff name keys the same way."""
    return flatten(dict(config))


def config_values(run_ids: Sequence[str], key: str) -> dict[str, str]:
    """run_id → the (string) value of dotted config ``key`` (for grouping runs)."""
    frame = runs()
    frame = frame[frame["run_id"].isin(run_ids)]
    return {
        run_id: str(flatten_config(config or {}).get(key, "–"))
        for run_id, config in zip(frame["run_id"], frame["config"], strict=True)
    }


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
