"""The last logged value of each metric of some runs, from each table it was logged in:
what ``queries.final_metrics`` shows and what a run stores with it at its end
(``catalogue.final_values``). Takes the store's ``FileCatalogue`` (or the ``RunStore``
holding it), so the store's own end of a run can read it.
"""

from __future__ import annotations

import pandas as pd

from db.file_catalogue import FileSource
from db.reader import query_arrow
from db.schema import EVALS, SCALARS
from db.selection import in_list
from sphere_engine.catalogue import QUALIFIER, Source

#: Which table a value was read from (the metric catalogue's ``Source``: ``eval:`` /
#: ``train:``), the qualifier of its column.
EVAL_SOURCE, TRAIN_SOURCE = Source.EVALUATION.value, Source.TRAINING_BATCH.value


def last_values(source: FileSource, runs: list[str], keys: list[str] | None) -> pd.DataFrame:
    """Rows run_id, name, value (at the metric's last step), source (``eval`` or
    ``train``) and column (``eval:recall@1``) of the metrics ``keys`` (None: all) of
    ``runs``, ids already checked."""
    where, params = ("TRUE", {}) if keys is None else in_list("name", "n", keys)
    sql = f"""
    SELECT run_id, name, arg_max(value, step) AS value, $eval_source AS source
    FROM evals WHERE {where} GROUP BY run_id, name
    UNION ALL
    SELECT run_id, name, arg_max(value, step) AS value, $train_source AS source
    FROM scalars WHERE {where} GROUP BY run_id, name
    """
    params = {**params, "eval_source": EVAL_SOURCE, "train_source": TRAIN_SOURCE}
    sources = {"evals": (EVALS, runs), "scalars": (SCALARS, runs)}
    last = query_arrow(source, sources, sql, params).to_pandas()
    last["column"] = last["source"] + QUALIFIER + last["name"]
    return last
