"""Evaluation of embeddings handed in by the user's own code (the SDK's ``evaluate``).

The same metrics as a training run's periodic evaluation (``sphere_engine.metrics``:
retrieval, clustering, angular separation, norms, and vertex alignment given the fixed
vertices), plus a seeded subsample kept as the snapshot for the Geometry page.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch


def _host(array: Any, name: str) -> np.ndarray:
    if isinstance(array, torch.Tensor):
        return array.detach().float().cpu().numpy()
    try:
        return np.asarray(array)
    except Exception as error:
        raise ValueError(f"{name} must be an array or tensor ({error})") from None


def evaluate_external(
    embeddings: Any,
    labels: Any,
    *,
    reference: Any = None,
    reference_labels: Any = None,
    vertices: Any = None,
    seed: int = 0,
    snapshot_size: int = 2000,
    collector: Any = None,
) -> tuple[dict[str, float], np.ndarray, np.ndarray]:
    """Metrics of N × d raw embeddings with N labels, and the snapshot rows (points, labels).
    ``collector`` (a ``metrics.per_query.QueryCollector``) keeps the per-query results of
    the leave-one-out retrieval (``external_query_results``)."""
    from sphere_engine.metrics import evaluate_embeddings, vertex_alignment

    if not isinstance(snapshot_size, int) or snapshot_size < 0:
        raise ValueError(f"snapshot_size must be an integer >= 0, got {snapshot_size!r}")
    points = _host(embeddings, "embeddings").astype(np.float32, copy=False)
    label_array = _host(labels, "labels").reshape(-1).astype(np.int64)
    metrics = evaluate_embeddings(
        points,
        label_array,
        seed=seed,
        reference=None if reference is None else _host(reference, "reference"),
        reference_labels=None
        if reference_labels is None
        else _host(reference_labels, "reference_labels"),
        collector=collector if reference is None else None,
    )
    if vertices is not None:
        for name, value in vertex_alignment(
            points, label_array, _host(vertices, "vertices")
        ).items():
            metrics[name if name.startswith("vertex/") else f"vertex/{name}"] = value
    rows = snapshot_rows(len(label_array), snapshot_size, seed)
    return metrics, points[rows], label_array[rows]


def snapshot_rows(count: int, snapshot_size: int, seed: int = 0) -> np.ndarray:
    """The rows of ``count`` evaluated embeddings ``evaluate_external`` keeps as the
    snapshot, in order (point i of the snapshot is row ``snapshot_rows(...)[i]``)."""
    rng = np.random.default_rng(seed + 104729)  # as the engine's Evaluator: a seeded subset
    return np.sort(rng.permutation(count)[: min(snapshot_size, count)])


def external_query_results(
    collector: Any, embeddings: Any, labels: Any, sample_ids: Any = None
) -> Any:
    """The per-query results ``evaluate_external`` collected (``QueryResults``), with each
    query's and neighbour's norm; rows renamed to ``sample_ids`` when given (so the
    explorer shows the user's ids, and the images ``Run.log_samples`` stored for them).
    ``sample_ids`` is checked by ``sample_id_array``."""
    from sphere_engine.metrics.inputs import check_embeddings, l2_normalize

    points = check_embeddings(_host(embeddings, "embeddings").astype(np.float32, copy=False))
    label_array = _host(labels, "labels").reshape(-1).astype(np.int64)
    unit, norms = l2_normalize(points), np.linalg.norm(points, axis=1)
    results = collector.results(unit, unit, label_array, "cosine", norms, norms)
    if sample_ids is None:
        return results
    return results.with_sample_ids(sample_id_array(sample_ids, points.shape[0]))


def sample_id_array(sample_ids: Any, count: int) -> np.ndarray:
    """``sample_ids`` as int64, one per embedding; a one-line ValueError otherwise."""
    if isinstance(sample_ids, torch.Tensor):  # kept integer (``_host`` makes floats)
        sample_ids = sample_ids.detach().cpu().numpy()
    ids = _host(sample_ids, "sample_ids").reshape(-1)
    # whole numbers in a float array are ids too (a gather across ranks may send floats)
    whole = np.issubdtype(ids.dtype, np.integer) or (
        np.issubdtype(ids.dtype, np.floating) and bool(np.all(np.mod(ids, 1) == 0))
    )
    if ids.shape[0] != count or (ids.size and not whole):
        raise ValueError(
            f"sample_ids must be {count} integer ids, one per embedding; got {ids.shape[0]} "
            f"of {ids.dtype}"
        )
    return ids.astype(np.int64)
