"""Read embeddings + labels from a file, for analysis without training.

Accepted formats (``load_embeddings_file``):

- ``.npz`` with arrays ``embeddings`` (N × d) and ``labels`` (N);
- ``.npy`` holding the N × d embeddings, with the labels in a sibling ``.npy`` in the
  same folder: ``X.npy`` + ``X_labels.npy``, or ``embeddings.npy`` + ``labels.npy``;
- ``.parquet`` or ``.csv`` with one label column, ``label`` or ``labels`` (not both),
  and the coordinates as either a single list-valued column ``embedding`` (in a CSV:
  text such as ``[0.1, 0.2]``), or the columns ``c0, c1, ...`` when present (the
  dashboard's snapshot export, whose other columns are ignored), or else all the
  other columns, which must then be numeric.

A ``.npy`` of embeddings is memory-mapped (``np.load(mmap_mode="r")``): float32 input
is used in place (``inputs.py`` passes over it in row chunks), so the loader holds no
copy of it; other dtypes are converted to float32 once.

Labels are integer class ids, or strings (class names: a text column, or a unicode
array in .npz/.npy), which are mapped to ids 0..C-1 in sorted name order;
``load_labelled_embeddings`` also returns the names. Anything else fails with a
ValueError naming the file and what is missing or wrong.
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from sphere_engine.metrics.inputs import check_embeddings, check_labels

if TYPE_CHECKING:
    import pandas as pd

SUFFIXES = (".npz", ".npy", ".parquet", ".csv")
LABEL_COLUMNS = ("label", "labels")
EMBEDDING_COLUMN = "embedding"
_COORDINATE_COLUMN = re.compile(r"c(\d+)")


class LabelledEmbeddings(NamedTuple):
    """An embeddings file's content: class names are None for integer labels."""

    embeddings: np.ndarray  # (N, d) float32
    labels: np.ndarray  # (N,) int64
    class_names: tuple[str, ...] | None  # name of class id i at position i


def load_embeddings_file(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """(embeddings float32 N × d, labels int64 N) read from ``path`` (see module doc)."""
    loaded = load_labelled_embeddings(path)
    return loaded.embeddings, loaded.labels


def load_labelled_embeddings(path: str | Path) -> LabelledEmbeddings:
    """Embeddings, int64 labels and (for string labels) the class names from ``path``."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise ValueError(f"embeddings file {path} has suffix {suffix!r}; allowed: {list(SUFFIXES)}")
    if not path.is_file():
        raise ValueError(f"embeddings file {path} does not exist")
    if suffix == ".npz":
        embeddings, labels = _read_npz(path)
    elif suffix == ".npy":
        embeddings, labels = _read_npy_pair(path)
    else:
        embeddings, labels = _read_table(path, suffix)
    embeddings = check_embeddings(embeddings, f"embeddings in {path}")
    labels, names = _label_ids(np.asarray(labels), path)
    labels = check_labels(labels, embeddings.shape[0], f"labels in {path}")
    return LabelledEmbeddings(embeddings, labels, names)


def _label_ids(labels: np.ndarray, path: Path) -> tuple[np.ndarray, tuple[str, ...] | None]:
    """String (or object-of-string) labels mapped to sorted-name ids; others unchanged."""
    if labels.dtype.kind not in "USO":
        return labels, None
    if labels.dtype.kind == "O" and not all(isinstance(value, str) for value in labels.tolist()):
        raise ValueError(f"labels in {path} must be all integers or all strings")
    names, ids = np.unique(labels.astype(str), return_inverse=True)
    return ids.astype(np.int64), tuple(str(name) for name in names)


def _read_npz(path: Path) -> tuple[np.ndarray, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as archive:
            present = sorted(archive.files)
            arrays = {key: archive[key] for key in ("embeddings", "labels") if key in present}
    except (OSError, ValueError, zipfile.BadZipFile) as error:
        raise ValueError(f"could not read {path} as a numeric .npz: {error}") from error
    missing = [key for key in ("embeddings", "labels") if key not in arrays]
    if missing:
        raise ValueError(
            f"{path} lacks array(s) {missing}; it has {present}, needs 'embeddings' and 'labels'"
        )
    return arrays["embeddings"], arrays["labels"]


def _read_npy(path: Path, mmap: bool = False) -> np.ndarray:
    try:
        return np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
    except (OSError, ValueError) as error:
        raise ValueError(f"could not read {path} as numeric .npy: {error}") from error


def _read_npy_pair(path: Path) -> tuple[np.ndarray, np.ndarray]:
    candidates = [path.with_name(f"{path.stem}_labels.npy")]
    if path.stem == "embeddings":
        candidates.append(path.with_name("labels.npy"))
    labels_path = next((candidate for candidate in candidates if candidate.is_file()), None)
    if labels_path is None:
        names = " or ".join(candidate.name for candidate in candidates)
        raise ValueError(f"no labels file for {path}: expected {names} in the same folder")
    return _read_npy(path, mmap=True), _read_npy(labels_path)


def _read_table(path: Path, suffix: str) -> tuple[np.ndarray, np.ndarray]:
    # pandas only for tables: the metrics import without it (a GPU box with torch,
    # numpy and scikit-learn runs bench/gpu_eval_check.sh).
    import pandas as pd

    try:
        table = pd.read_parquet(path) if suffix == ".parquet" else pd.read_csv(path)
    except Exception as error:  # pandas/pyarrow raise many types for a bad file
        raise ValueError(f"could not read {path} as {suffix}: {error}") from error
    columns = [str(column) for column in table.columns]
    table.columns = columns
    label_columns = [name for name in LABEL_COLUMNS if name in columns]
    if len(label_columns) != 1:
        problem = "both" if label_columns else "neither"
        raise ValueError(
            f"{path} has {problem} of the label columns {list(LABEL_COLUMNS)}; it needs "
            f"exactly one. Columns: {columns}"
        )
    label_column = label_columns[0]
    labels = table[label_column]
    if not pd.api.types.is_numeric_dtype(labels):
        if labels.isna().any():
            raise ValueError(f"column {label_column!r} in {path} has missing labels")
        labels = labels.astype(str)
    labels = labels.to_numpy()

    if EMBEDDING_COLUMN in columns:
        return _stack_vectors(table[EMBEDDING_COLUMN], path), labels
    coordinates = sorted(
        (int(match.group(1)), name)
        for name in columns
        if (match := _COORDINATE_COLUMN.fullmatch(name))
    )
    if coordinates:
        names = [name for _, name in coordinates]
    else:
        names = [name for name in columns if name != label_column]
    if not names:
        raise ValueError(f"{path} has no coordinate columns besides {label_column!r}")
    non_numeric = [name for name in names if not pd.api.types.is_numeric_dtype(table[name])]
    if non_numeric:
        raise ValueError(f"{path}: coordinate columns must be numeric; non-numeric: {non_numeric}")
    return table[names].to_numpy(dtype=np.float64), labels


def _stack_vectors(column: pd.Series, path: Path) -> np.ndarray:
    """N vectors from a list-valued column (lists, arrays, or JSON text in a CSV)."""
    rows = []
    for position, value in enumerate(column.tolist()):
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as error:
                raise ValueError(
                    f"{path}: row {position} of column {EMBEDDING_COLUMN!r} is not a list "
                    f"of numbers: {value[:40]!r}"
                ) from error
        try:
            row = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError) as error:
            raise ValueError(
                f"{path}: row {position} of column {EMBEDDING_COLUMN!r} is not numeric"
            ) from error
        if row.ndim != 1 or (rows and row.shape != rows[0].shape):
            raise ValueError(
                f"{path}: column {EMBEDDING_COLUMN!r} must hold equal-length vectors; row "
                f"{position} has shape {row.shape}"
            )
        rows.append(row)
    if not rows:
        raise ValueError(f"{path} has no rows")
    return np.stack(rows)
