"""Sampled k-means on a torch device (the ``torch-cuda`` backend's clustering).

The same recipe as faiss's sampled k-means in ``kmeans.py``: a seeded sample of at
most ``SAMPLE_PER_CENTROID`` points per centroid, initial centres drawn from it at
random (seeded), ``SAMPLED_ITERATIONS`` Lloyd iterations in float32 (TF32 off), then
every point assigned to its nearest centre. The nearest centre is the argmax of
2 x·c − |c|² (squared L2, as faiss's k-means), the lowest centre id on a tie; an empty
cluster keeps its centre (faiss would split a large one instead, so the two differ
in that case). Assignment runs in row chunks within the budget, never N × k at once.
"""

from __future__ import annotations

import numpy as np
import torch

from sphere_engine.metrics.device_knn import device_budget_bytes, exact_float32


def _assign(points: torch.Tensor, centres: torch.Tensor, budget: int) -> torch.Tensor:
    """Nearest centre (int64) of every row, in chunks of rows whose scores fit ``budget``."""
    minus_half_sq = -0.5 * (centres * centres).sum(1)[None, :]
    rows = max(1, budget // (8 * centres.shape[0]))  # the scores and argmax's work
    parts = [
        torch.argmax(torch.addmm(minus_half_sq, chunk, centres.T), dim=1)
        for chunk in torch.split(points, rows)
    ]
    return torch.cat(parts)


def device_kmeans_labels(
    points: np.ndarray,
    num_clusters: int,
    *,
    train_count: int,
    iterations: int,
    seed: int,
    device: str,
    memory_budget_mb: float = 256.0,
) -> np.ndarray:
    """Cluster ids (N int64) of N × d float32 points, trained on ``train_count`` of them."""
    where = torch.device(device)
    budget = device_budget_bytes(where, memory_budget_mb)
    rng = np.random.default_rng(seed)
    sample = np.sort(rng.choice(points.shape[0], train_count, replace=False))
    with exact_float32(), torch.no_grad():
        train = torch.from_numpy(np.ascontiguousarray(points[sample], dtype=np.float32))
        train = train.to(where)
        start = rng.choice(train_count, num_clusters, replace=False)
        centres = train[torch.from_numpy(start).to(where)].clone()
        for _ in range(iterations):
            assigned = _assign(train, centres, budget)
            sums = torch.zeros_like(centres).index_add_(0, assigned, train)
            counts = torch.bincount(assigned, minlength=num_clusters)
            filled = counts > 0
            centres[filled] = sums[filled] / counts[filled, None].to(sums.dtype)
        del train
        labels = [
            _assign(torch.from_numpy(np.ascontiguousarray(part)).to(where), centres, budget)
            for part in np.array_split(points, max(1, -(-points.nbytes // max(1, budget // 2))))
        ]
        return torch.cat(labels).cpu().numpy().astype(np.int64)
