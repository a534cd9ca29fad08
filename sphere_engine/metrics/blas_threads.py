"""One BLAS thread for a block of code, without scanning the loaded libraries.

The limited blocks (rank counting's and k-means++'s products) multiply numpy arrays,
so only numpy's BLAS matters. Where numpy bundles its OpenBLAS (the PyPI wheels, in
``numpy.libs``), its thread count is set directly through ctypes: finding it among
the mapped files costs ~0.5 ms. ``threadpoolctl`` instead walks every shared library
of the process, resolving each path (~23 ms the first time at ~290 libraries: ~5 %
of a cold 10k × 128 retrieval + clustering evaluation, run before the worker threads
start). Elsewhere (a system or MKL numpy, no ``/proc``) a ``ThreadpoolController``,
built once, limits every BLAS it finds.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

import numpy as np
from threadpoolctl import ThreadpoolController  # installed with (and used by) scikit-learn

# numpy's wheels rename OpenBLAS's symbols (numpy ≥ 2: scipy_openblas…64_; 1.x: …64_).
_SYMBOLS = (
    ("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
    ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
    ("openblas_get_num_threads", "openblas_set_num_threads"),
)
ThreadCount = tuple[Callable[[], int], Callable[[int], None]]


@lru_cache(maxsize=1)
def _numpy_openblas() -> ThreadCount | None:
    """(get, set) of the thread count of the OpenBLAS in numpy's own ``numpy.libs``
    folder, if that is loaded; None otherwise."""
    bundled = Path(np.__file__).resolve().parent.parent / "numpy.libs"
    try:
        mapped = Path("/proc/self/maps").read_text()
    except OSError:
        return None
    paths = {line.split(maxsplit=5)[-1] for line in mapped.splitlines() if "openblas" in line}
    for path in sorted(paths):
        if Path(path).parent != bundled:
            continue
        library = ctypes.CDLL(path, mode=getattr(os, "RTLD_NOLOAD", 0))
        for get, put in _SYMBOLS:
            if hasattr(library, get) and hasattr(library, put):
                getter, setter = getattr(library, get), getattr(library, put)
                getter.restype, setter.argtypes = ctypes.c_int, [ctypes.c_int]
                return getter, setter
    return None


@lru_cache(maxsize=1)
def _controller() -> ThreadpoolController:
    return ThreadpoolController()


@contextmanager
def single_blas_thread() -> Iterator[None]:
    """Context manager: numpy's BLAS limited to one thread inside, restored on exit."""
    bundled = _numpy_openblas()
    if bundled is None:
        with _controller().limit(limits=1, user_api="blas"):
            yield
        return
    get, put = bundled
    before = get()
    put(1)
    try:
        yield
    finally:
        put(before)
