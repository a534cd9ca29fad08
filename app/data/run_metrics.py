"""The Runs table's metric columns for many runs, read once per ended run.

An ended run's writer stored its final values with it (the run catalogue's
``metrics``, ``db.catalogue.final_values``); an ended run without them (recorded before
they were) never logs again, so its last values are kept for the life of the process
(per home, run and end time) and only runs that have not been read yet, or are still
active, are read from the store: a page with 500 runs reads the 2 or 3 that train, not
the 500 (``bench/runs_page.py``). Runs are read
in a few batches on threads (DuckDB works outside the GIL).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pandas as pd

from app.data.cache import home, store

#: Runs read per batch; batches run on up to ``_THREADS`` threads.
_BATCH = 150
_THREADS = 2
_ENDED = ("finished", "failed", "cancelled", "lost")

_lock = threading.Lock()
#: (home, run_id, finished_at) → {column: value} of an ended run.
_ended_values: dict[tuple[str, str, str], dict[str, Any]] = {}


def _read(run_ids: Sequence[str], columns: Sequence[str]) -> pd.DataFrame:
    from db import queries

    batches = [list(run_ids[i : i + _BATCH]) for i in range(0, len(run_ids), _BATCH)]

    def one(batch: list[str]) -> pd.DataFrame:
        return queries.final_metrics(store(), batch, list(columns))

    if len(batches) == 1:
        return one(batches[0])
    with ThreadPoolExecutor(max_workers=_THREADS) as pool:
        return pd.concat(list(pool.map(one, batches)), ignore_index=True)


def key_values(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """One row per run of ``frame`` (index run_id), one column per source-qualified
    metric column (``"train:norm/var"``, ``"eval:recall@1"``): its last value."""
    root = home()
    keys = {
        run_id: (root, run_id, str(finished))
        for run_id, status, finished in zip(
            frame["run_id"], frame["status"], frame["finished_at"], strict=True
        )
        if status in _ENDED
    }
    with _lock:
        known = {run_id: _ended_values[key] for run_id, key in keys.items() if key in _ended_values}
    # the final values an ended run's writer stored with it (the run catalogue's)
    stored = frame["metrics"] if "metrics" in frame else [None] * len(frame)
    for run_id, values in zip(frame["run_id"], stored, strict=True):
        if run_id in keys and run_id not in known and isinstance(values, dict) and values:
            known[run_id] = {column: values.get(column) for column in columns}
    missing = [run_id for run_id in frame["run_id"] if run_id not in known]
    rows: dict[str, dict[str, Any]] = dict(known)
    if missing:
        read = _read(missing, columns).set_index("run_id")
        fresh = {
            run_id: {c: read.at[run_id, c] if c in read.columns else None for c in columns}
            for run_id in read.index
        }
        rows.update(fresh)
        with _lock:
            for run_id, values in fresh.items():
                if run_id in keys:
                    _ended_values[keys[run_id]] = values
    table = pd.DataFrame.from_dict(rows, orient="index", columns=list(columns))
    return table.reindex(frame["run_id"])
