"""Input checks and conversions shared by every metric function.

Metric functions accept numpy arrays or torch tensors (on any device). They convert
once to host numpy: embeddings to float32 (N × d), labels to int64 (N), and fail with
a ValueError naming the argument, the bad value and what is allowed.

Float32 C-ordered input (e.g. a memory-mapped ``.npy``) is used in place, not copied;
the passes over it (finiteness, row norms, normalisation) run in row chunks of
``CHUNK_BYTES``, so their temporaries stay bounded whatever N is.
"""

from __future__ import annotations

from typing import Any

import numpy as np

CHUNK_BYTES = 32 * 2**20  # input bytes per chunk of the row-wise passes


def row_chunks(array: np.ndarray) -> list[slice]:
    """Row slices of about ``CHUNK_BYTES`` of ``array`` each."""
    rows = max(1, CHUNK_BYTES // max(1, array.itemsize * int(np.prod(array.shape[1:]))))
    return [slice(start, start + rows) for start in range(0, array.shape[0], rows)]


def row_norms(array: np.ndarray) -> np.ndarray:
    """L2 norm of each row (N float64), in float64, chunk by chunk."""
    norms = np.empty(array.shape[0], dtype=np.float64)
    for part in row_chunks(array):
        norms[part] = np.linalg.norm(array[part].astype(np.float64), axis=1)
    return norms


def to_numpy(array: Any, name: str) -> np.ndarray:
    """A host numpy view/copy of a numpy array, torch tensor (any device) or sequence."""
    if type(array).__module__.startswith("torch"):
        import torch  # already imported by the caller, since it made a tensor

        tensor = array.detach()
        if tensor.dtype in (torch.float16, torch.bfloat16):
            tensor = tensor.float()  # bfloat16 has no numpy dtype
        return tensor.cpu().numpy()
    try:
        return np.asarray(array)
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"{name} must be an array or tensor; got {type(array).__name__}"
        ) from error


def check_embeddings(embeddings: Any, name: str = "embeddings") -> np.ndarray:
    """Embeddings as a finite float32 array of shape (N, d), N ≥ 1, d ≥ 1."""
    array = to_numpy(embeddings, name)
    if array.dtype == object or not (
        np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_
    ):
        raise ValueError(f"{name} must be numeric; got dtype {array.dtype}")
    if np.issubdtype(array.dtype, np.complexfloating):
        raise ValueError(f"{name} must be real-valued; got dtype {array.dtype}")
    if array.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D (N samples × d dimensions); got shape {tuple(array.shape)}"
        )
    if array.shape[0] == 0 or array.shape[1] == 0:
        raise ValueError(f"{name} must be non-empty; got shape {tuple(array.shape)}")
    array = np.ascontiguousarray(array, dtype=np.float32)  # no copy if already so
    bad_rows = np.concatenate(
        [
            part.start + np.flatnonzero(~np.isfinite(array[part]).all(axis=1))
            for part in row_chunks(array)
        ]
    )
    if bad_rows.size:
        raise ValueError(
            f"{name} contains NaN or inf in {bad_rows.size} row(s), first at row "
            f"{int(bad_rows[0])}; all values must be finite"
        )
    return array


def check_labels(labels: Any, num_samples: int, name: str = "labels") -> np.ndarray:
    """Labels as an int64 array of shape (N,), matching ``num_samples``."""
    array = to_numpy(labels, name)
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D (N,); got shape {tuple(array.shape)}")
    if array.shape[0] != num_samples:
        raise ValueError(
            f"{name} has {array.shape[0]} entries but the embeddings have {num_samples} rows; "
            "lengths must match"
        )
    if np.issubdtype(array.dtype, np.integer) or array.dtype == np.bool_:
        return array.astype(np.int64, copy=False)
    if np.issubdtype(array.dtype, np.floating):
        if not np.isfinite(array).all() or not np.array_equal(array, np.round(array)):
            raise ValueError(f"{name} must be integer class ids; got non-integer floats")
        return array.astype(np.int64)
    raise ValueError(f"{name} must be integer class ids; got dtype {array.dtype}")


def check_pair(embeddings: Any, labels: Any, *, min_classes: int = 2) -> tuple[np.ndarray, ...]:
    """Checked (embeddings float32 N × d, labels int64 N) with at least ``min_classes``."""
    x = check_embeddings(embeddings)
    y = check_labels(labels, x.shape[0])
    num_classes = np.unique(y).size
    if num_classes < min_classes:
        raise ValueError(
            f"labels must contain at least {min_classes} distinct classes; got {num_classes}"
        )
    return x, y


def check_same_dimension(array: np.ndarray, name: str, other: np.ndarray, other_name: str) -> None:
    """A one-line ValueError unless the two arrays' rows have one dimension."""
    if array.shape[1] != other.shape[1]:
        raise ValueError(
            f"{name} has dimension {array.shape[1]} and {other_name} dimension "
            f"{other.shape[1]}; they must match"
        )


def check_reference(
    queries: np.ndarray, reference: Any, reference_labels: Any
) -> tuple[np.ndarray, np.ndarray] | None:
    """The checked (reference float32 M × d, reference_labels int64 M) searched by the
    checked ``queries``, or None when neither is given (leave-one-out retrieval); one is
    given without the other, or a dimension unlike the queries', is a ValueError."""
    if (reference is None) != (reference_labels is None):
        raise ValueError("reference and reference_labels must be given together")
    if reference is None:
        return None
    checked = check_embeddings(reference, "reference")
    check_same_dimension(checked, "reference", queries, "the embeddings")
    return checked, check_labels(reference_labels, checked.shape[0], "reference_labels")


def l2_normalize(embeddings: np.ndarray, name: str = "embeddings") -> np.ndarray:
    """Rows scaled to unit L2 norm (N × d float32); zero rows are an error."""
    norms = row_norms(embeddings)
    zero = np.flatnonzero(norms == 0)
    if zero.size:
        raise ValueError(
            f"{name} has {zero.size} zero vector(s), first at row {int(zero[0])}; "
            "they have no direction and cannot be normalised"
        )
    unit = np.empty(embeddings.shape, dtype=np.float32)
    for part in row_chunks(embeddings):
        unit[part] = embeddings[part] / norms[part, None]
    return unit


def check_ks(ks: Any) -> tuple[int, ...]:
    """Recall@K cut-offs as a sorted tuple of distinct positive ints."""
    values = (ks,) if isinstance(ks, int) else tuple(ks)
    if not values or any(
        isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1 for k in values
    ):
        raise ValueError(f"ks must be positive integers; got {ks!r}")
    return tuple(sorted({int(k) for k in values}))
