"""One BLAS thread for a block of code, without rescanning the loaded libraries.

``threadpoolctl.threadpool_limits`` walks every shared library of the process each
time it is entered (~4 ms warm, ~18 ms the first time, at ~290 loaded libraries): at
10k × 128 that was ~5 % of a retrieval + clustering evaluation, which enters it twice.
A ``ThreadpoolController`` scans once; its ``limit`` then costs ~50 µs. It knows the
libraries loaded when it was built (numpy's OpenBLAS is, by the time this runs: the
callers multiply numpy arrays), which are the ones the limited blocks call.
"""

from __future__ import annotations

from functools import lru_cache

from threadpoolctl import ThreadpoolController  # installed with (and used by) scikit-learn


@lru_cache(maxsize=1)
def _controller() -> ThreadpoolController:
    return ThreadpoolController()


def single_blas_thread():
    """Context manager: BLAS limited to one thread inside, restored on exit."""
    return _controller().limit(limits=1, user_api="blas")
