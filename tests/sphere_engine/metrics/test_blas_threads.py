"""single_blas_thread: one BLAS thread inside, the previous counts restored after."""

from __future__ import annotations

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
