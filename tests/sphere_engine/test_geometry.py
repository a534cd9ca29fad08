"""sphere_engine.geometry: the numpy-only maths shared by the metrics and the app."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from sphere_engine.geometry import centroid_angle_matrix, pca_2d
from sphere_engine.metrics import angular_separation


def test_pca_2d_recovers_a_line():
    t = np.linspace(-1, 1, 11)
    points = np.stack([t, 2 * t, -t], axis=1)
    coords, ratio = pca_2d(points)
    assert ratio == pytest.approx([1.0, 0.0], abs=1e-12)
    assert np.abs(coords[:, 0]) == pytest.approx(np.abs(t) * math.sqrt(6))
    assert coords[:, 1] == pytest.approx(np.zeros(11), abs=1e-9)


def test_centroid_angles_in_degrees():
    points = np.array([[2.0, 0.0], [3.0, 0.1], [0.0, 1.0], [0.1, 5.0], [-1.0, 0.0]])
    labels = np.array([0, 0, 1, 1, 2])
    angles, classes = centroid_angle_matrix(points, labels)
    assert classes.tolist() == [0, 1, 2]
    assert angles[0, 2] == pytest.approx(180.0, abs=2.0)
    assert angles[0, 1] == pytest.approx(90.0, abs=3.0)
    assert np.diag(angles) == pytest.approx([0.0, 0.0, 0.0], abs=1e-5)


def test_centroid_angle_matrix_agrees_with_the_evaluation_metric():
    rng = np.random.default_rng(3)
    labels = np.arange(90) % 5
    points = rng.normal(size=(5, 6))[labels] * 3 + rng.normal(size=(90, 6))
    angles, _ = centroid_angle_matrix(points, labels)
    upper = angles[np.triu_indices(5, k=1)]
    scores = angular_separation(points, labels)
    assert scores["angle/inter_min"] == pytest.approx(upper.min())
    assert scores["angle/inter_mean"] == pytest.approx(upper.mean())


def test_a_class_without_direction_is_90_degrees_from_everything():
    points = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
    angles, _ = centroid_angle_matrix(points, np.array([0, 0, 1]))
    assert angles.tolist() == [[90.0, 90.0], [90.0, 0.0]]


def test_importing_geometry_loads_no_torch():
    code = "import sys, sphere_engine.geometry; print('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "False", result.stderr
