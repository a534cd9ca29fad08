"""Which library and device do the neighbour search and k-means: one registry, chosen once.

Backends (``BACKENDS``, plus ``"auto"``):

- ``faiss``: faiss on the CPU (``IndexFlatIP``/``IndexFlatL2``, ``faiss.Kmeans``);
- ``faiss-gpu``: the same on GPU 0 (``StandardGpuResources``, ``index_cpu_to_gpu``,
  ``faiss.Kmeans(gpu=True)``); needs a faiss build with GPUs (``faiss.get_num_gpus()``);
- ``torch-cuda``: exact chunked matmul + topk on a torch device (``device_knn.py``) and a
  seeded torch k-means there (``device_kmeans.py``); for a GPU without faiss-gpu (no
  faiss-gpu wheel exists for CUDA 13);
- ``torch``: chunked torch matmul + ``topk`` on the CPU and ``sklearn.cluster.KMeans``.

All give the same neighbours (ties by index, see ``neighbors.py``; the tests compare
them). ``"auto"`` takes the first that is usable, in the order faiss-gpu, torch-cuda,
faiss, torch (``choose_backend``, a pure function of what is present). The choice is
made once per evaluation (``resolve_backend``) and can be forced by
``evaluation.knn_backend`` / ``--knn-backend``. Tests flip ``FAISS_AVAILABLE`` to
exercise the fallback, and set ``TORCH_DEVICE = "cpu"`` to run the torch-cuda code
on the CPU.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sphere_engine.catalogue.facts import KNN_BACKENDS

try:
    import faiss
except ImportError:  # pragma: no cover - depends on the environment
    faiss = None

FAISS_AVAILABLE: bool = faiss is not None
TORCH_DEVICE = "cuda"  # where ``torch-cuda`` runs; tests set "cpu"

BACKENDS = KNN_BACKENDS
DEVICE_BACKENDS = ("faiss-gpu", "torch-cuda")  # rank on the device, no CPU counting


def faiss_gpus() -> int:
    """GPUs faiss can use (0 for a CPU-only faiss build or no faiss)."""
    if not FAISS_AVAILABLE or faiss is None:
        return 0
    count = getattr(faiss, "get_num_gpus", None)
    return int(count()) if count is not None else 0


def torch_device_usable() -> bool:
    """Whether ``TORCH_DEVICE`` exists here (always for "cpu")."""
    if TORCH_DEVICE == "cpu":
        return True
    import torch  # heavy; only when a device backend is asked about

    return bool(torch.cuda.is_available())


def choose_backend(faiss_importable: bool, gpus_for_faiss: int, torch_cuda: bool) -> str:
    """The ``auto`` choice: faiss-gpu > torch-cuda > faiss > torch."""
    if faiss_importable and gpus_for_faiss > 0:
        return "faiss-gpu"
    if torch_cuda:
        return "torch-cuda"
    return "faiss" if faiss_importable else "torch"


def resolve_backend(backend: str) -> str:
    """The concrete backend for a requested one; an unusable request is a ValueError."""
    if backend not in BACKENDS:
        raise ValueError(f"knn backend must be one of {list(BACKENDS)}; got {backend!r}")
    if backend == "auto":
        cuda = TORCH_DEVICE != "cpu" and torch_device_usable()
        return choose_backend(FAISS_AVAILABLE, faiss_gpus(), cuda)
    if backend in ("faiss", "faiss-gpu") and not FAISS_AVAILABLE:
        raise ValueError(f"knn backend {backend!r} was requested but faiss is not importable")
    if backend == "faiss-gpu" and faiss_gpus() == 0:
        raise ValueError("knn backend 'faiss-gpu' was requested but faiss sees no GPU")
    if backend == "torch-cuda" and not torch_device_usable():
        raise ValueError("knn backend 'torch-cuda' was requested but torch sees no CUDA device")
    return backend


@contextmanager
def single_faiss_thread() -> Iterator[None]:
    """Context manager: faiss's OpenMP limited to one thread inside, restored on exit.

    For faiss calls made of many small steps (Lloyd iterations of an evaluation-sized
    k-means): each step ends at an OpenMP barrier where, with the default wait
    policy, idle threads spin; on shared cores that spinning costs several times the
    work (k-means of 10,000 × 128 into 100 clusters: 0.39 s CPU on 2 threads, 0.09 s
    on one) and the wall time with it.
    """
    if faiss is None:
        yield
        return
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)
