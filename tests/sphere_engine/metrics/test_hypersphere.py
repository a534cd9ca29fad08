"""Uniformity, alignment and hyperspherical energy against direct pair sums."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
import torch

from sphere_engine.metrics import alignment, hyperspherical_energy, uniformity


def unit_rows(x):
    x = np.asarray(x, dtype=np.float64)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_uniformity_matches_wang_and_isola():
    x = np.random.default_rng(0).normal(size=(120, 6)).astype(np.float32)
    reference = torch.pdist(torch.from_numpy(unit_rows(x)), p=2).pow(2).mul(-2).exp().mean().log()
    assert uniformity(x) == pytest.approx(float(reference), abs=1e-6)
    assert uniformity([[1.0, 0.0], [-1.0, 0.0]]) == pytest.approx(-8.0)  # ||x − y||² = 4


def test_uniformity_subsample_is_seeded_and_bounded():
    x = np.random.default_rng(1).normal(size=(500, 4))
    first = uniformity(x, max_points=100, seed=3)
    assert first == uniformity(x, max_points=100, seed=3)
    assert first != uniformity(x, max_points=100, seed=4)
    assert first == pytest.approx(uniformity(x), abs=0.1)  # an estimate of the full value


def test_alignment_matches_enumerating_same_class_pairs(blobs):
    x, y = blobs
    unit = unit_rows(x)
    distances = [
        ((unit[i] - unit[j]) ** 2).sum() for i, j in combinations(range(len(y)), 2) if y[i] == y[j]
    ]
    assert alignment(x, y) == pytest.approx(np.mean(distances), abs=1e-6)


def test_alignment_of_collapsed_classes_is_zero_and_singletons_give_nan():
    x = np.array([[2.0, 0.0], [1.0, 0.0], [0.0, 3.0], [0.0, 1.0]])
    assert alignment(x, [0, 0, 1, 1]) == pytest.approx(0.0, abs=1e-12)
    assert np.isnan(alignment(x, [0, 1, 2, 3]))


def test_energy_of_a_regular_simplex():
    classes = 6
    vertices = np.eye(classes) - 1.0 / classes
    distance = np.sqrt(2 + 2 / (classes - 1))  # ||v_i − v_j|| for cosine −1/(K−1)
    assert hyperspherical_energy(vertices) == pytest.approx(1 / distance, abs=1e-7)


def test_energy_matches_pairs_and_stays_finite_for_coincident_points():
    x = np.random.default_rng(2).normal(size=(9, 3))
    unit = unit_rows(x)
    pairs = [1 / np.linalg.norm(unit[i] - unit[j]) for i, j in combinations(range(9), 2)]
    assert hyperspherical_energy(x) == pytest.approx(np.mean(pairs), rel=1e-6)
    assert np.isfinite(hyperspherical_energy([[1.0, 0.0], [1.0, 0.0]]))


def test_energy_needs_two_points():
    with pytest.raises(ValueError, match="at least 2 points"):
        hyperspherical_energy([[1.0, 0.0]])
