"""2-D projections of embeddings for the Geometry page's projector, by name.

PCA (numpy), UMAP (umap-learn) and t-SNE (openTSNE), each seeded so a cached
projection and a recomputed one agree. Pure functions of an N × d array: no store,
no Streamlit (the page caches them, ``app.data.projection``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from sphere_engine.geometry import pca_2d


def _pca(points: np.ndarray, seed: int) -> np.ndarray:
    return pca_2d(points)[0]


def _umap(points: np.ndarray, seed: int) -> np.ndarray:
    import umap  # numba JIT: loaded on first use only

    neighbours = max(2, min(15, len(points) - 1))
    reducer = umap.UMAP(n_components=2, n_neighbors=neighbours, random_state=seed, n_jobs=1)
    return np.asarray(reducer.fit_transform(points), dtype=np.float64)


def _tsne(points: np.ndarray, seed: int) -> np.ndarray:
    from openTSNE import TSNE

    perplexity = max(2.0, min(30.0, (len(points) - 1) / 3))
    embedding = TSNE(n_components=2, perplexity=perplexity, random_state=seed, n_jobs=1)
    return np.asarray(embedding.fit(points), dtype=np.float64)


#: The projector's methods, in the order the page offers them.
METHODS: dict[str, Callable[[np.ndarray, int], np.ndarray]] = {
    "PCA": _pca,
    "UMAP": _umap,
    "t-SNE": _tsne,
}


def project(points: np.ndarray, method: str, *, on_sphere: bool, seed: int = 0) -> np.ndarray:
    """N × 2 coordinates of N × d ``points`` by ``method`` (``METHODS``); ``on_sphere``:
    of the unit-normalised embeddings (the directions a normalised loss compares)."""
    if method not in METHODS:
        raise ValueError(f"projection method {method!r}: use one of {', '.join(METHODS)}")
    if len(points) < 3:
        raise ValueError(f"a projection needs at least 3 embeddings; got {len(points)}")
    points = np.asarray(points, dtype=np.float64)
    if on_sphere:
        points = points / np.maximum(np.linalg.norm(points, axis=1, keepdims=True), 1e-12)
    return METHODS[method](points, seed)
