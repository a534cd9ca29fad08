"""Norm statistics of raw embeddings."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sphere_engine.metrics import norm_statistics


def test_known_norms():
    # Rows with norms 1, 2, 3, 4 (3-4-5 and axis vectors).
    x = np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 0.0], [0.0, -4.0]])
    result = norm_statistics(x)
    assert result["norm/mean"] == pytest.approx(2.5)
    assert result["norm/var"] == pytest.approx(1.25)  # population variance, ddof = 0
    assert result["norm/std"] == pytest.approx(np.sqrt(1.25))
    assert result["norm/cv"] == pytest.approx(np.sqrt(1.25) / 2.5)
    assert (result["norm/min"], result["norm/max"]) == pytest.approx((1.0, 4.0))


def test_scaling_scales_everything_but_the_coefficient_of_variation():
    x = np.random.default_rng(0).normal(size=(50, 8))
    base, scaled = norm_statistics(x), norm_statistics(torch.from_numpy(3 * x))
    assert scaled["norm/mean"] == pytest.approx(3 * base["norm/mean"], rel=1e-6)
    assert scaled["norm/var"] == pytest.approx(9 * base["norm/var"], rel=1e-5)
    assert scaled["norm/cv"] == pytest.approx(base["norm/cv"], rel=1e-5)


def test_equal_norms_have_zero_variance():
    x = np.array([[3.0, 4.0], [5.0, 0.0], [0.0, -5.0]])
    assert norm_statistics(x)["norm/var"] == pytest.approx(0.0, abs=1e-12)
