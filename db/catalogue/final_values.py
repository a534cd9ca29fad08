"""A run's key final values, stored with it at its end so the catalogue (and the Runs
table) shows them without reading the run's logged series."""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING

from db.catalogue.rows import FINAL_KEY
from sphere_engine.catalogue import RUNS_TABLE, Source, column_key

if TYPE_CHECKING:
    from db.store import RunStore

log = logging.getLogger(__name__)

#: Training-step values kept besides every evaluation metric: the Runs table's.
TRAIN_COLUMNS = tuple(column_key(s, k) for s, k in RUNS_TABLE if s is Source.TRAINING_BATCH)


def final_values(store: RunStore, run_id: str) -> dict[str, float]:
    """Column key → last value: every evaluation metric, and the Runs table's
    training-step ones (finite values only)."""
    from db.queries import final_metrics  # pandas and DuckDB: only once a run ends

    frame = final_metrics(store, run_id)
    eval_prefix = f"{Source.EVALUATION}:"
    values = {}
    for column in frame.columns[2:]:
        if not (column.startswith(eval_prefix) or column in TRAIN_COLUMNS):
            continue
        value = float(frame[column].iloc[0])
        if math.isfinite(value):
            values[column] = value
    return values


def record_final_values(store: RunStore, run_id: str) -> None:
    """Store the run's final values in its info (``final_metrics``); never fails the run."""
    try:
        store.update_run_info(run_id, {FINAL_KEY: final_values(store, run_id)})
    except OSError as error:
        log.warning("run %s: final values not stored: %s", run_id, error)
    except Exception:
        log.exception("run %s: final values could not be read", run_id)
