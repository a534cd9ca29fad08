"""Seeded k-means on all points, the same with faiss or scikit-learn.

Both backends start from the same k-means++ centres (``sklearn.cluster.kmeans_plusplus``
with ``random_state=seed``) and run Lloyd iterations to convergence (at most
``max_iter``), so for a given seed the clustering is reproducible and, up to float
rounding and empty-cluster handling, identical between backends. faiss subsamples
256 points per centroid by default; here ``max_points_per_centroid`` is set so that
every point is used.
"""

from __future__ import annotations

import numpy as np
from sklearn.cluster import KMeans, kmeans_plusplus

from sphere_engine.metrics import backend as backends


def kmeans_labels(
    points: np.ndarray,
    num_clusters: int,
    *,
    seed: int = 0,
    max_iter: int = 100,
    backend: str = "auto",
) -> np.ndarray:
    """Cluster ids (N int64, in 0..num_clusters-1) of N × d float32 points."""
    num_points = points.shape[0]
    if not 1 <= num_clusters <= num_points:
        raise ValueError(
            f"num_clusters must be between 1 and the number of points ({num_points}); "
            f"got {num_clusters}"
        )
    points = np.ascontiguousarray(points, dtype=np.float32)
    centres, _ = kmeans_plusplus(points, num_clusters, random_state=seed)
    if backends.resolve_backend(backend) == "torch":
        model = KMeans(
            num_clusters, init=centres, n_init=1, max_iter=max_iter, tol=0.0, random_state=seed
        )
        return model.fit(points).labels_.astype(np.int64)

    faiss = backends.faiss
    kmeans = faiss.Kmeans(
        points.shape[1],
        num_clusters,
        niter=max_iter,
        seed=seed,
        nredo=1,
        # Use every point (faiss's default subsamples 256 per centroid) and do not warn
        # about small clusters (it asks for 39 points per centroid by default).
        max_points_per_centroid=num_points,
        min_points_per_centroid=1,
        verbose=False,
    )
    kmeans.train(points, init_centroids=np.ascontiguousarray(centres, dtype=np.float32))
    _, assignment = kmeans.index.search(points, 1)
    return assignment[:, 0].astype(np.int64)
