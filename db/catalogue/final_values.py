"""A run's key final values, stored with it at its end so the catalogue (and the Runs
table) shows them without reading the run's logged series."""

from __future__ import annotations

import logging
import math

from db import user_fields
from db.catalogue.rows import FINAL_KEY
from db.file_catalogue import FileSource, catalogue_of
from sphere_engine.catalogue import RUNS_TABLE, Source, column_key

log = logging.getLogger(__name__)

#: Training-step values kept besides every evaluation metric: the Runs table's.
TRAIN_COLUMNS = tuple(column_key(s, k) for s, k in RUNS_TABLE if s is Source.TRAINING_BATCH)


def final_values(source: FileSource, run_id: str) -> dict[str, float]:
    """Column key → last value: every evaluation metric, and the Runs table's
    training-step ones (finite values only)."""
    from db.last_values import EVAL_SOURCE, last_values  # DuckDB: only once a run ends

    last = last_values(source, [run_id], None)
    values = {}
    rows = zip(last["column"], last["source"], last["value"], strict=True)
    for column, source_name, value in sorted(rows, key=lambda r: (r[1] != EVAL_SOURCE, r[0])):
        if source_name != EVAL_SOURCE and column not in TRAIN_COLUMNS:
            continue
        if math.isfinite(value):
            values[column] = float(value)
    return values


def record_final_values(source: FileSource, run_id: str) -> None:
    """Store the run's final values in its info (``final_metrics``); never fails the run."""
    try:
        values = {FINAL_KEY: final_values(source, run_id)}
        user_fields.update_run_info(catalogue_of(source), run_id, values)
    except OSError as error:
        log.warning("run %s: final values not stored: %s", run_id, error)
    except Exception:
        log.exception("run %s: final values could not be read", run_id)
