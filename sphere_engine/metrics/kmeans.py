"""Seeded k-means on all points, the same with faiss or scikit-learn.

Both backends start from the same greedy k-means++ centres (the algorithm of
``sklearn.cluster.kmeans_plusplus``, here in float32 matrix products, seeded by
``seed``) and run Lloyd iterations until the assignment stops changing (at most
``max_iter``), so for a given seed the clustering is reproducible and, up to float
rounding and empty-cluster handling, identical between backends. faiss subsamples
256 points per centroid by default; here ``max_points_per_centroid`` is set so that
every point is used.

Above ``EXACT_MAX_POINTS`` points (benchmark-scale sets) that exact clustering costs
several times a whole exact kNN, so k-means there is faiss's own: ``SAMPLED_ITERATIONS``
Lloyd iterations from seeded random centres, trained on a seeded sample of at most
``SAMPLE_PER_CENTROID`` points per centroid, then every point assigned to its nearest
centre (``sampled_kmeans_labels``; on the ``torch-cuda`` backend the same recipe in
torch on the device, ``device_kmeans.py``; the number of training points is reported by
``clustering.py`` as ``clustering/train_points``).
"""

from __future__ import annotations

import numpy as np
from sklearn.cluster import KMeans

from sphere_engine.metrics import backend as backends
from sphere_engine.metrics.blas_threads import single_blas_thread
from sphere_engine.metrics.device_kmeans import device_kmeans_labels
from sphere_engine.metrics.neighbors import search_on_every_core

_FAISS_BLOCK = 10  # Lloyd iterations per faiss call between convergence checks
EXACT_MAX_POINTS = 20_000
SAMPLED_ITERATIONS = 20
SAMPLE_PER_CENTROID = 256  # faiss's default training sample per centroid


def _squared_distances(candidates: np.ndarray, points_t: np.ndarray, points_sq: np.ndarray):
    """(t × N) float32 squared distances of t candidate centres to N points, given as
    the d × N C-contiguous ``points_t``: OpenBLAS's sgemm with a handful of rows is much
    faster on it than on the transposed view of N × d points, and this product is most
    of k-means++'s time."""
    candidates_sq = (candidates * candidates).sum(axis=1, keepdims=True)
    distances = candidates @ points_t
    distances *= -2.0
    distances += candidates_sq
    distances += points_sq[None, :]
    return np.maximum(distances, 0.0, out=distances)


def kmeans_plus_plus(points: np.ndarray, num_clusters: int, seed: int = 0) -> np.ndarray:
    """Greedy k-means++ initial centres (num_clusters × d float32) of N × d points.

    Each new centre is the best (lowest potential) of 2 + ⌊ln k⌋ candidates drawn
    with probability proportional to the squared distance to the nearest centre.
    """
    # k small sequential products (t × d by d × N): BLAS threads only add sync cost,
    # several times the work itself on a busy machine, so run them single-threaded.
    with single_blas_thread():
        return _greedy_kmeans_plus_plus(points, num_clusters, seed)


def _greedy_kmeans_plus_plus(points: np.ndarray, num_clusters: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    count = points.shape[0]
    trials = 2 + int(np.log(num_clusters))
    points_sq = (points * points).sum(axis=1)
    points_t = np.ascontiguousarray(points.T)  # one copy, read by every step's product
    chosen = [int(rng.integers(count))]
    closest = _squared_distances(points[chosen], points_t, points_sq)[0]
    for _ in range(1, num_clusters):
        cumulative = np.cumsum(closest, dtype=np.float64)
        draws = rng.uniform(size=trials) * cumulative[-1]
        candidates = np.minimum(np.searchsorted(cumulative, draws), count - 1)
        distances = np.minimum(
            closest[None, :], _squared_distances(points[candidates], points_t, points_sq)
        )
        best = int(np.argmin(distances.sum(axis=1, dtype=np.float64)))
        chosen.append(int(candidates[best]))
        closest = distances[best]
    return np.ascontiguousarray(points[chosen], dtype=np.float32)


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
    centres = kmeans_plus_plus(points, num_clusters, seed)
    # Small sets (≤ EXACT_MAX_POINTS): scikit-learn without faiss, else faiss on the CPU.
    if backends.resolve_backend(backend) == "torch" or not backends.FAISS_AVAILABLE:
        model = KMeans(
            num_clusters, init=centres, n_init=1, max_iter=max_iter, tol=0.0, random_state=seed
        )
        return model.fit(points).labels_.astype(np.int64)
    with backends.single_faiss_thread():
        return _faiss_kmeans(points, centres, seed=seed, max_iter=max_iter)


def _faiss_kmeans(points: np.ndarray, centres: np.ndarray, *, seed: int, max_iter: int):
    """Lloyd iterations with ``faiss.Kmeans`` in blocks, stopping at a fixed point."""
    faiss = backends.faiss
    done = 0
    while done < max_iter:
        block = min(_FAISS_BLOCK, max_iter - done)
        kmeans = faiss.Kmeans(
            points.shape[1],
            centres.shape[0],
            niter=block,
            seed=seed + done,
            nredo=1,
            # Use every point (faiss's default subsamples 256 per centroid) and do not
            # warn about small clusters (it asks for 39 points per centroid by default).
            max_points_per_centroid=points.shape[0],
            min_points_per_centroid=1,
            verbose=False,
        )
        kmeans.train(points, init_centroids=centres)
        centres, done = kmeans.centroids, done + block
        # An unchanged assignment gives unchanged centres, hence an identical objective
        # at the next iteration: two equal consecutive objectives mean convergence.
        if (np.diff(kmeans.obj) == 0).any():
            break
    _, assignment = kmeans.index.search(points, 1)
    return assignment[:, 0].astype(np.int64)


def sampled_training_points(num_points: int, num_clusters: int) -> int:
    """How many points ``sampled_kmeans_labels`` trains on."""
    return min(num_points, SAMPLE_PER_CENTROID * num_clusters)


def sampled_kmeans_labels(
    points: np.ndarray, num_clusters: int, *, seed: int = 0, backend: str = "faiss"
) -> np.ndarray:
    """Cluster ids (N int64) from k-means trained on a seeded sample (module doc):
    faiss's on the CPU (``faiss``) or GPU (``faiss-gpu``), or ``device_kmeans.py``'s
    on the torch device (``torch-cuda``)."""
    train_count = sampled_training_points(points.shape[0], num_clusters)
    if backend == "torch-cuda":
        return device_kmeans_labels(
            points, num_clusters, train_count=train_count, iterations=SAMPLED_ITERATIONS,
            seed=seed, device=backends.TORCH_DEVICE,
        )  # fmt: skip
    faiss = backends.faiss
    if faiss is None:
        raise ValueError("sampled k-means needs faiss; install faiss-cpu")
    points = np.ascontiguousarray(points, dtype=np.float32)
    sample = np.sort(np.random.default_rng(seed).choice(points.shape[0], train_count, False))
    kmeans = faiss.Kmeans(
        points.shape[1],
        num_clusters,
        niter=SAMPLED_ITERATIONS,
        seed=seed,
        max_points_per_centroid=SAMPLE_PER_CENTROID,
        min_points_per_centroid=1,
        verbose=False,
        gpu=backend == "faiss-gpu",
    )
    kmeans.train(points[sample])
    if backend == "faiss-gpu":
        _, assignment = kmeans.index.search(points, 1)
    else:
        _, assignment = search_on_every_core(kmeans.index, points, 1)
    return assignment[:, 0].astype(np.int64)
