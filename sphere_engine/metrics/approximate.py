"""Approximate leave-one-out Recall@1 with a faiss IVF index (an option beside exact).

For sets where an exact kNN is too slow on a CPU: an ``IndexIVFFlat`` (inner product
on unit rows, i.e. cosine) with ``nlist`` cells trained on a seeded sample, searched
``nprobe`` cells deep for each query's 2 nearest (its own row is dropped by index).
The result carries ``recall@1_approx``; its difference from the exact Recall@1 is the
price of the approximation, which ``bench/eval_scale.py`` measures and prints.
"""

from __future__ import annotations

import numpy as np

from sphere_engine.metrics import backend as backends

TRAIN_PER_CELL = 64
QUERY_CHUNK = 65_536


def default_cells(count: int) -> int:
    """nlist ≈ 4 √N, the usual faiss guideline for exact-ish recall at small nprobe."""
    return max(1, min(count // 39, int(4 * np.sqrt(count))))


def ivf_recall_at_1(
    unit: np.ndarray,
    labels: np.ndarray,
    *,
    nlist: int | None = None,
    nprobe: int = 16,
    seed: int = 0,
) -> dict[str, float]:
    """``recall@1_approx`` of N × d unit rows (leave-one-out) and the index settings."""
    faiss = backends.faiss
    if faiss is None:
        raise ValueError("the approximate (IVF) index needs faiss; install faiss-cpu")
    count, dim = unit.shape
    cells = default_cells(count) if nlist is None else nlist
    if not 1 <= cells <= count or nprobe < 1:
        raise ValueError(f"nlist must be in 1..{count} and nprobe >= 1; got {cells}, {nprobe}")
    quantizer = faiss.IndexFlatIP(dim)
    index = faiss.IndexIVFFlat(quantizer, dim, cells, faiss.METRIC_INNER_PRODUCT)
    train = min(count, TRAIN_PER_CELL * cells)
    sample = np.sort(np.random.default_rng(seed).choice(count, train, replace=False))
    index.train(np.ascontiguousarray(unit[sample], dtype=np.float32))
    for start in range(0, count, QUERY_CHUNK):
        index.add(np.ascontiguousarray(unit[start : start + QUERY_CHUNK], dtype=np.float32))
    index.nprobe = min(nprobe, cells)
    hits = 0
    for start in range(0, count, QUERY_CHUNK):
        rows = np.arange(start, min(count, start + QUERY_CHUNK))
        _, found = index.search(np.ascontiguousarray(unit[rows], dtype=np.float32), 2)
        nearest = np.where(found[:, 0] == rows, found[:, 1], found[:, 0])
        valid = nearest >= 0
        hits += int((labels[nearest[valid]] == labels[rows[valid]]).sum())
    return {
        "recall@1_approx": hits / count,
        "approx/nlist": float(cells),
        "approx/nprobe": float(index.nprobe),
    }
