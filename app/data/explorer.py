"""The retrieval explorer's data: one evaluation step's per-query and per-class results
(``db.query_results``), shaped for the page: worst queries, confused class pairs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from app.data.cache import SLOW_LIVE_TTL, STATIC_TTL, store_read
from db import query_results as results
from db import thumbnails as stored_thumbnails
from sphere_engine.catalogue.facts import WORST_QUERY_ORDERS

if TYPE_CHECKING:
    from db.store import RunStore

#: The orders the worst queries are listed in (the page's choice): column, ascending.
#: Declared with the engine, which draws the thumbnails of the queries they list.
WORST_BY = WORST_QUERY_ORDERS


@store_read(STATIC_TTL)
def evaluation_steps(store: RunStore, run_id: str) -> list[int]:
    """Steps of the run with stored per-query results."""
    return results.evaluation_steps(store, run_id)


@store_read(STATIC_TTL)
def queries(store: RunStore, run_id: str, step: int) -> pd.DataFrame:
    """Per-query rows; ``ValueError`` naming the steps that have results otherwise."""
    return results.query_results(store, run_id, step)


@store_read(STATIC_TTL)
def classes(store: RunStore, run_id: str, step: int) -> pd.DataFrame:
    return results.per_class_results(store, run_id, step)


@store_read(SLOW_LIVE_TTL)  # an SDK run may log its samples' images after an evaluation
def thumbnails(store: RunStore, run_id: str, samples: tuple[int, ...]) -> dict[int, bytes]:
    """PNG bytes of the samples the run has an image of (``db.thumbnails``)."""
    return stored_thumbnails.thumbnails(store, run_id, samples)


def shown_samples(rows: pd.DataFrame) -> tuple[int, ...]:
    """The sample ids of these queries and of all their neighbours (sorted, once each)."""
    ids = set(rows["query"].astype(int))
    for neighbours in rows["neighbors"]:
        ids.update(int(n) for n in neighbours)
    return tuple(sorted(ids))


def worst_queries(rows: pd.DataFrame, by: str, count: int) -> pd.DataFrame:
    """The ``count`` worst queries in the order ``WORST_BY[by]`` (ties by query id)."""
    first, second = WORST_BY[by]
    return rows.sort_values([first, second, "query"], kind="stable").head(count)


def neighbour_strip(row: pd.Series, names: dict[int, str]) -> pd.DataFrame:
    """One query's neighbours, nearest first: rank, id, label, class, similarity, norm
    (the raw embedding's ‖f‖; NaN for steps stored without norms), correct."""
    labels = np.asarray(row["neighbor_labels"], dtype=np.int64)
    norms = row.get("neighbor_norms")
    return pd.DataFrame(
        {
            "rank": np.arange(1, len(labels) + 1),
            "neighbour": np.asarray(row["neighbors"], dtype=np.int64),
            "label": labels,
            "class": [names.get(int(label), str(label)) for label in labels],
            "similarity": np.asarray(row["similarities"], dtype=float),
            "norm": np.full(len(labels), np.nan)
            if not _is_list(norms)
            else np.asarray(norms, dtype=float),
            "correct": labels == int(row["label"]),
        }
    )


def _is_list(value: object) -> bool:
    return value is not None and not (isinstance(value, float) and np.isnan(value))


def confused_pairs(rows: pd.DataFrame, names: dict[int, str], count: int = 10) -> pd.DataFrame:
    """The class pairs most often confused at rank 1: a query of class ``true`` whose
    nearest neighbour is of class ``retrieved`` (columns true, retrieved, queries, share
    of the true class's queries)."""
    columns = ["true", "retrieved", "queries", "share"]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    first = np.array([lst[0] if len(lst) else -1 for lst in rows["neighbor_labels"]])
    true = rows["label"].to_numpy(dtype=np.int64)
    wrong = (first != true) & (first >= 0)
    pairs = pd.DataFrame({"true": true[wrong], "retrieved": first[wrong]})
    if pairs.empty:
        return pd.DataFrame(columns=columns)
    counted = pairs.value_counts().rename("queries").reset_index()
    per_class = pd.Series(true).value_counts()
    counted["share"] = counted["queries"] / counted["true"].map(per_class)
    counted = counted.sort_values(["queries", "true", "retrieved"], ascending=[False, True, True])
    for column in ("true", "retrieved"):
        counted[column] = [names.get(int(label), str(label)) for label in counted[column]]
    return counted.head(count)[columns].reset_index(drop=True)


def class_names(per_class: pd.DataFrame) -> dict[int, str]:
    """Label → name when the step stored names (string labels), else the label itself."""
    if "class_name" not in per_class:
        return {}
    return {
        int(label): str(name)
        for label, name in zip(per_class["label"], per_class["class_name"], strict=True)
    }
