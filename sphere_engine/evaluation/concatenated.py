"""MLRC's "concatenated" test evaluation of k fold models (SCIENCE.md §9).

Each fold model of a reproduction embeds the same test samples once
(``evaluation.final_test``, ``final_test.TEST_EMBEDDINGS_FILE``); the concatenated
evaluation L2-normalises each model's embeddings, as powerful-benchmarker's
``ConcatenateEmbeddings`` does, concatenates them per sample (k·d dimensions) and scores
the result with the same retrieval functions as every evaluation (cosine). The
"separated" evaluation is the mean of the fold runs' own ``test/...`` metrics.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from sphere_engine.catalogue.facts import DEFAULT_RECALL_KS

PROTOCOLS = ("leave_one_out", "query_gallery")


def load_test_embeddings(path: str | Path) -> dict[str, np.ndarray]:
    """The arrays of one ``test_embeddings.npz``, rows sorted by sample id; ValueError
    naming the file when it is missing or lacks an array."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such test embeddings file")
    with np.load(path) as stored:
        missing = [k for k in ("embeddings", "labels", "ids", "is_query") if k not in stored]
        if missing:
            raise ValueError(f"{path}: not a test embeddings file (no {', '.join(missing)})")
        arrays = {k: stored[k] for k in ("embeddings", "labels", "ids", "is_query")}
    order = np.argsort(arrays["ids"], kind="stable")
    return {k: v[order] for k, v in arrays.items()}


def concatenate_embeddings(npz_paths: Sequence[str | Path]) -> dict[str, np.ndarray]:
    """The fold models' embeddings of the same samples, each L2-normalised, side by
    side: ``embeddings`` (N, Σd), with ``labels``, ``ids`` and ``is_query`` (N,)."""
    if not npz_paths:
        raise ValueError("concatenated evaluation: no test embeddings files given")
    parts = [load_test_embeddings(p) for p in npz_paths]
    first = parts[0]
    for path, part in zip(npz_paths[1:], parts[1:], strict=True):
        same = np.array_equal(part["ids"], first["ids"]) and np.array_equal(
            part["labels"], first["labels"]
        )
        if not same:
            raise ValueError(
                f"{path}: its test samples differ from {npz_paths[0]}'s; the concatenated "
                "evaluation needs every fold model's embeddings of the same test split"
            )
    unit = []
    for path, part in zip(npz_paths, parts, strict=True):
        norms = np.linalg.norm(part["embeddings"], axis=1, keepdims=True)
        if not np.all(norms > 0) or not np.all(np.isfinite(norms)):
            raise ValueError(f"{path}: an embedding is zero or not finite")
        unit.append(part["embeddings"] / norms)
    return {
        "embeddings": np.concatenate(unit, axis=1).astype(np.float32),
        "labels": first["labels"],
        "ids": first["ids"],
        "is_query": first["is_query"],
    }


def concatenated_metrics(
    npz_paths: Sequence[str | Path],
    *,
    protocol: str = "leave_one_out",
    recall_ks: Sequence[int] = DEFAULT_RECALL_KS,
    backend: str = "auto",
) -> dict[str, float]:
    """Retrieval metrics (``precision@1``, ``r_precision``, ``map@r``, ``recall@K``, ...)
    of the concatenated embeddings of ``npz_paths`` (one per fold model) under
    ``protocol`` (``query_gallery`` takes the files' ``is_query``)."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {list(PROTOCOLS)}; got {protocol!r}")
    from sphere_engine.metrics.query_gallery import retrieval_protocol_metrics

    joined = concatenate_embeddings(npz_paths)
    return retrieval_protocol_metrics(
        joined["embeddings"],
        joined["labels"],
        protocol=protocol,
        is_query=joined["is_query"] if protocol == "query_gallery" else None,
        recall_ks=tuple(recall_ks),
        backend=backend,
    )
