"""The SEC paper's final table (Compare page), its columns taken from the catalogue."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from app.data.reads import final_metrics
from sphere_engine.catalogue import PAPER_TABLE, PAPER_TABLE_OPTIONAL, column_key, find


def _columns(optional: bool = False) -> list[tuple[str, str, bool, bool]]:
    """(column key, header, higher is better, shown in percent) per paper column (with
    ``optional``: also the catalogue's optional columns, e.g. TAR@FAR)."""
    result = []
    for source, key in PAPER_TABLE + (PAPER_TABLE_OPTIONAL if optional else ()):
        metric = find(key, source)
        assert metric is not None, key  # tests/sphere_engine/test_catalogue.py checks this
        higher = bool(metric.higher_is_better)
        result.append(
            (column_key(source, key), metric.header(source), higher, metric.unit == "fraction")
        )
    return result


def paper_table(run_ids: Sequence[str]) -> pd.DataFrame:
    """Final metrics in the SEC paper's layout: run, NMI, F1, R@1, MAP@R, norm var
    (test set). Fractions (retrieval, clustering) are shown in percent, as in the paper."""
    columns = _columns(optional=True)
    finals = final_metrics(tuple(run_ids), [c for c, _, _, _ in columns])
    required = len(PAPER_TABLE)  # optional columns only when some run logged them
    columns = columns[:required] + [
        c for c in columns[required:] if c[0] in finals and finals[c[0]].notna().any()
    ]
    headers = ["run_id", "run", *[h for _, h, _, _ in columns]]
    if finals.empty:
        return pd.DataFrame(columns=headers)
    table = pd.DataFrame({"run_id": finals["run_id"], "run": finals["name"]})
    for column, title, _, percent in columns:
        values = pd.to_numeric(finals[column], errors="coerce") if column in finals else np.nan
        table[title] = values * 100.0 if percent else values
    return table[headers].reset_index(drop=True)


def paper_best() -> dict[str, bool]:
    """Column header → higher is better, for highlighting the best value per column."""
    return {title: higher for _, title, higher, _ in _columns(optional=True)}
