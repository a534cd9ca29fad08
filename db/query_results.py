"""Per-query and per-class retrieval results of one evaluation step (the explorer's data).

    <home>/runs/<run_id>/evaluations/step-<step>/queries.parquet   one row per kept query
    <home>/runs/<run_id>/evaluations/step-<step>/classes.parquet   one row per class

``queries``: ``query`` (row of the evaluated set), ``label``, ``positives`` (R: reference
samples of its class), ``hit@1``, ``ap@r`` (its AP@R), and its ``k`` nearest reference
rows as lists ``neighbors``, ``neighbor_labels``, ``similarities`` (nearest first);
optionally the raw embedding norms: ``norm`` (the query's) and ``neighbor_norms``
(older steps lack them).
``classes``: ``label``, ``samples`` (queries of the class), ``queries`` (those with R > 0,
the ones scored), ``recall@1`` and ``map@r`` over them (NaN for a class of one sample,
which cannot be retrieved). An optional ``class_name`` column names string labels.

Each file is written once per step, atomically (``db.atomic``); a step written again
replaces its files. Torch-free: the writer takes plain arrays. Like every module of
``db``, it takes the store's ``FileCatalogue`` (or the ``RunStore`` holding it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from db.atomic import write_atomic
from db.file_catalogue import FileCatalogue, FileSource, catalogue_of

EVALUATIONS = "evaluations"
QUERIES_FILE = "queries.parquet"
CLASSES_FILE = "classes.parquet"
_STEP_FOLDER = re.compile(r"^step-(\d{10})$")

QUERY_COLUMNS = ("query", "label", "positives", "hit@1", "ap@r")
NEIGHBOR_COLUMNS = ("neighbors", "neighbor_labels", "similarities")
NORM_COLUMNS = ("norm", "neighbor_norms")  # optional: written when given
CLASS_COLUMNS = ("label", "samples", "queries", "recall@1", "map@r")


def _step_dir(files: FileCatalogue, run_id: str, step: int) -> Path:
    if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or step < 0:
        raise ValueError(f"step must be a non-negative integer; got {step!r}")
    return files.run_dir(run_id) / EVALUATIONS / f"step-{int(step):010d}"


def _check_columns(table: Mapping[str, Sequence], required: Sequence[str], what: str) -> int:
    missing = [name for name in required if name not in table]
    if missing:
        raise ValueError(f"{what} results lack column(s) {missing}; need {list(required)}")
    lengths = {name: len(table[name]) for name in table}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"{what} results have columns of different lengths: {lengths}")
    return next(iter(lengths.values()), 0)


def _list_column(rows: object, dtype: type, name: str, length: int) -> pa.Array:
    """A (length × k) array as an Arrow list column of k values per row."""
    array = np.asarray(rows, dtype=dtype)
    if array.ndim != 2 or array.shape[0] != length:
        raise ValueError(
            f"query results: {name} must be a (queries × k) array; got shape {array.shape}"
        )
    offsets = np.arange(length + 1, dtype=np.int32) * array.shape[1]
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(array.reshape(-1)))


def write_query_results(
    source: FileSource,
    run_id: str,
    step: int,
    queries: Mapping[str, Sequence],
    classes: Mapping[str, Sequence],
) -> Path:
    """Write one step's per-query rows and per-class rows; returns the step's folder.

    ``queries`` maps ``QUERY_COLUMNS`` to equal-length arrays and ``NEIGHBOR_COLUMNS``
    to (queries × k) arrays, and optionally ``norm`` (queries) with ``neighbor_norms``
    (queries × k); ``classes`` maps ``CLASS_COLUMNS`` (and optionally
    ``class_name``) to equal-length arrays.
    """
    files = catalogue_of(source)
    folder = _step_dir(files, run_id, step)
    if not files.exists(run_id):
        raise ValueError(f"run {run_id!r} does not exist in {files.home}")
    count = _check_columns(queries, (*QUERY_COLUMNS, *NEIGHBOR_COLUMNS), "query")
    _check_columns(classes, CLASS_COLUMNS, "class")
    query_columns: dict[str, pa.Array] = {
        "query": pa.array(np.asarray(queries["query"], dtype=np.int64)),
        "label": pa.array(np.asarray(queries["label"], dtype=np.int64)),
        "positives": pa.array(np.asarray(queries["positives"], dtype=np.int64)),
        "hit@1": pa.array(np.asarray(queries["hit@1"], dtype=bool)),
        "ap@r": pa.array(np.asarray(queries["ap@r"], dtype=np.float64)),
        "neighbors": _list_column(queries["neighbors"], np.int64, "neighbors", count),
        "neighbor_labels": _list_column(
            queries["neighbor_labels"], np.int64, "neighbor_labels", count
        ),
        "similarities": _list_column(queries["similarities"], np.float32, "similarities", count),
    }
    if all(name in queries for name in NORM_COLUMNS):
        widths = np.shape(queries["neighbor_norms"]), np.shape(queries["neighbors"])
        if widths[0] != widths[1]:
            raise ValueError(
                f"query results: neighbor_norms must be a (queries × k) array like "
                f"neighbors {widths[1]}; got shape {widths[0]}"
            )
        query_columns["norm"] = pa.array(np.asarray(queries["norm"], dtype=np.float32))
        query_columns["neighbor_norms"] = _list_column(
            queries["neighbor_norms"], np.float32, "neighbor_norms", count
        )
    query_table = pa.table(query_columns)
    class_columns: dict[str, pa.Array] = {
        "label": pa.array(np.asarray(classes["label"], dtype=np.int64)),
        "samples": pa.array(np.asarray(classes["samples"], dtype=np.int64)),
        "queries": pa.array(np.asarray(classes["queries"], dtype=np.int64)),
        "recall@1": pa.array(np.asarray(classes["recall@1"], dtype=np.float64)),
        "map@r": pa.array(np.asarray(classes["map@r"], dtype=np.float64)),
    }
    if "class_name" in classes:
        class_columns["class_name"] = pa.array([str(n) for n in classes["class_name"]])
    class_table = pa.table(class_columns)
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(folder / QUERIES_FILE, lambda temp: pq.write_table(query_table, temp))
    write_atomic(folder / CLASSES_FILE, lambda temp: pq.write_table(class_table, temp))
    return folder


def evaluation_steps(source: FileSource, run_id: str) -> list[int]:
    """Steps of ``run_id`` with stored per-query results, ascending."""
    root = catalogue_of(source).run_dir(run_id) / EVALUATIONS
    if not root.is_dir():
        return []
    steps = []
    for child in root.iterdir():
        match = _STEP_FOLDER.match(child.name)
        if match and (child / CLASSES_FILE).is_file():
            steps.append(int(match.group(1)))
    return sorted(steps)


def _read(files: FileCatalogue, run_id: str, step: int, name: str) -> pd.DataFrame:
    path = _step_dir(files, run_id, step) / name
    if not path.is_file():
        known = evaluation_steps(files, run_id)
        raise ValueError(
            f"run {run_id!r} has no per-query results at step {step}; steps with results: "
            f"{known or 'none'}"
        )
    try:
        return pq.read_table(path).to_pandas()
    except (OSError, pa.ArrowInvalid) as error:
        raise ValueError(f"{path}: unreadable per-query results ({error})") from None


def query_results(source: FileSource, run_id: str, step: int) -> pd.DataFrame:
    """The kept queries of one step: ``QUERY_COLUMNS`` + ``NEIGHBOR_COLUMNS`` (lists)."""
    return _read(catalogue_of(source), run_id, step, QUERIES_FILE)


def per_class_results(source: FileSource, run_id: str, step: int) -> pd.DataFrame:
    """Per-class R@1 and MAP@R of one step: ``CLASS_COLUMNS`` (+ ``class_name``)."""
    return _read(catalogue_of(source), run_id, step, CLASSES_FILE)


def store_query_results(
    source: FileSource,
    run_id: str,
    step: int,
    results: object,
    class_names: Sequence[str] | None = None,
) -> Path:
    """Write an engine ``QueryResults`` (``.queries`` and ``.classes`` column dicts);
    ``class_names[label]`` names each class when labels came from names."""
    queries: Mapping[str, Sequence] = results.queries  # type: ignore[attr-defined]
    classes: dict[str, Sequence] = dict(results.classes)  # type: ignore[attr-defined]
    if class_names is not None:
        classes["class_name"] = [class_names[int(label)] for label in classes["label"]]
    return write_query_results(source, run_id, step, queries, classes)
