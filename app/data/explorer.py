"""The retrieval explorer's data: one evaluation step's per-query and per-class results
(``db.query_results``), shaped for the page: worst queries, confused class pairs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from app.data.cache import STATIC_TTL, store_read
from db import query_results as results

if TYPE_CHECKING:
    from db.store import RunStore

#: The orders the worst queries are listed in (the page's choice): column, ascending.
WORST_BY = {"R@1 (a miss first)": ("hit@1", "ap@r"), "AP@R": ("ap@r", "hit@1")}


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


def worst_queries(rows: pd.DataFrame, by: str, count: int) -> pd.DataFrame:
    """The ``count`` worst queries in the order ``WORST_BY[by]`` (ties by query id)."""
    first, second = WORST_BY[by]
    return rows.sort_values([first, second, "query"], kind="stable").head(count)


def neighbour_strip(row: pd.Series, names: dict[int, str]) -> pd.DataFrame:
    """One query's neighbours, nearest first: rank, id, label, class, similarity, correct."""
    labels = np.asarray(row["neighbor_labels"], dtype=np.int64)
    return pd.DataFrame(
        {
            "rank": np.arange(1, len(labels) + 1),
            "neighbour": np.asarray(row["neighbors"], dtype=np.int64),
            "label": labels,
            "class": [names.get(int(label), str(label)) for label in labels],
            "similarity": np.asarray(row["similarities"], dtype=float),
            "correct": labels == int(row["label"]),
        }
    )


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
