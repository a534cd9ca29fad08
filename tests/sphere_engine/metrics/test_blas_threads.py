"""single_blas_thread: one BLAS thread inside, the previous counts restored after."""

from __future__ import annotations

import pytest
from threadpoolctl import threadpool_info

from sphere_engine.metrics.blas_threads import single_blas_thread


def _blas_threads() -> list[int]:
    """Thread counts of numpy's BLAS (what the limited blocks call)."""
    return [
        pool["num_threads"]
        for pool in threadpool_info()
        if pool["user_api"] == "blas" and "numpy" in pool["filepath"]
    ]


def test_limits_blas_to_one_thread_and_restores():
    before = _blas_threads()
    assert before
    for _ in range(2):  # the cached controller works for every use
        with single_blas_thread():
            assert set(_blas_threads()) == {1}
        assert _blas_threads() == before


def test_bundled_openblas_is_limited_without_scanning_libraries(monkeypatch):
    # numpy's wheel bundles OpenBLAS: set directly, never through threadpoolctl's
    # controller (its scan of every loaded library cost ~23 ms on first use).
    from sphere_engine.metrics import blas_threads

    if not any("numpy.libs" in pool["filepath"] for pool in threadpool_info()):
        pytest.skip("numpy without a bundled OpenBLAS")

    def no_scan():
        raise AssertionError("scanned the loaded libraries")

    monkeypatch.setattr(blas_threads, "_controller", no_scan)
    before = _blas_threads()
    with single_blas_thread():
        assert set(_blas_threads()) == {1}
    assert _blas_threads() == before


def test_falls_back_to_threadpoolctl_without_a_bundled_openblas(monkeypatch):
    from sphere_engine.metrics import blas_threads

    monkeypatch.setattr(blas_threads, "_numpy_openblas", lambda: None)
    before = _blas_threads()
    with single_blas_thread():
        assert set(_blas_threads()) == {1}
    assert _blas_threads() == before
