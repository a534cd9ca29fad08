"""Which library does the heavy lifting: faiss when importable, else torch + scikit-learn.

``backend="faiss"`` uses ``faiss.IndexFlatIP``/``IndexFlatL2`` for exact neighbours and
``faiss.Kmeans`` for clustering; ``backend="torch"`` uses a chunked torch matmul +
``topk`` and ``sklearn.cluster.KMeans``. Both give the same results (see the tests);
``"auto"`` picks faiss when it is importable. Tests flip ``FAISS_AVAILABLE`` to
exercise the fallback (patch ``sphere_engine.metrics.backend.FAISS_AVAILABLE``).
"""

from __future__ import annotations

try:
    import faiss
except ImportError:  # pragma: no cover - depends on the environment
    faiss = None

FAISS_AVAILABLE: bool = faiss is not None

BACKENDS = ("auto", "faiss", "torch")


def resolve_backend(backend: str) -> str:
    """The concrete backend (``"faiss"`` or ``"torch"``) for a requested one."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {list(BACKENDS)}; got {backend!r}")
    if backend == "auto":
        return "faiss" if FAISS_AVAILABLE else "torch"
    if backend == "faiss" and not FAISS_AVAILABLE:
        raise ValueError("backend 'faiss' was requested but faiss is not importable; use 'torch'")
    return backend
