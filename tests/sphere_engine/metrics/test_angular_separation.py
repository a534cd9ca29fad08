"""Angles between class centroids and to fixed vertices (degrees)."""

from __future__ import annotations

import numpy as np
import pytest

from sphere_engine.metrics import angular_separation, class_centroids, vertex_alignment


def regular_simplex(classes: int) -> np.ndarray:
    """K unit vertices with pairwise cosine −1/(K−1), in K dimensions (centred basis)."""
    vertices = np.eye(classes) - 1.0 / classes
    return vertices / np.linalg.norm(vertices, axis=1, keepdims=True)


@pytest.mark.parametrize("classes", [3, 5, 10, 50])
def test_regular_simplex_reaches_the_simplex_bound(classes):
    vertices = regular_simplex(classes)
    labels = np.repeat(np.arange(classes), 3)
    result = angular_separation(vertices[labels] * 2.5, labels)  # norms do not matter
    bound = np.degrees(np.arccos(-1.0 / (classes - 1)))
    assert result["angle/simplex_bound"] == pytest.approx(bound, abs=1e-12)
    assert result["angle/inter_min"] == pytest.approx(bound, abs=1e-9)
    assert result["angle/inter_mean"] == pytest.approx(bound, abs=1e-9)
    assert result["angle/intra_mean"] == pytest.approx(0.0, abs=1e-5)  # float32 input


def test_spread_around_each_vertex_gives_the_intra_angle():
    classes, tilt = 4, np.radians(12.0)
    vertices = np.hstack([regular_simplex(classes), np.zeros((classes, 1))])
    extra = np.zeros(classes + 1)
    extra[-1] = 1.0
    # Two samples per class, tilted ±12° off the vertex into the spare dimension.
    x = np.concatenate(
        [
            np.cos(tilt) * vertices + np.sin(tilt) * extra,
            np.cos(tilt) * vertices - np.sin(tilt) * extra,
        ]
    )
    labels = np.tile(np.arange(classes), 2)
    result = angular_separation(x, labels)
    bound = np.degrees(np.arccos(-1.0 / 3))
    assert result["angle/intra_mean"] == pytest.approx(12.0, abs=1e-4)
    assert result["angle/inter_min"] == pytest.approx(bound, abs=1e-4)
    assert result["angle/intra_over_inter"] == pytest.approx(12.0 / bound, abs=1e-6)


def test_inter_angles_of_known_centroids():
    # Centroids at 0°, 30° and 90°: pairs 30°, 90°, 60°.
    angles = np.radians([0.0, 30.0, 90.0])
    x = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    result = angular_separation(x, [0, 1, 2])
    assert result["angle/inter_min"] == pytest.approx(30.0, abs=1e-4)
    assert result["angle/inter_mean"] == pytest.approx(60.0, abs=1e-4)


def test_centroid_is_the_normalised_mean_of_normalised_rows():
    unit = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]], dtype=np.float32)
    classes, centroids = class_centroids(unit, np.array([7, 7, 2]))
    np.testing.assert_array_equal(classes, [2, 7])
    np.testing.assert_allclose(centroids, [[0.0, 1.0], [np.sqrt(0.5), np.sqrt(0.5)]])


def test_vertex_alignment_reports_mean_and_max_angle():
    vertices = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    angles = np.radians([10.0, 90.0 - 30.0, 180.0])  # 10°, 30° and 0° off their vertices
    x = 4.0 * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    result = vertex_alignment(x, [0, 1, 2], vertices)
    assert result["vertex/angle_mean"] == pytest.approx(40.0 / 3, abs=1e-4)
    assert result["vertex/angle_max"] == pytest.approx(30.0, abs=1e-4)


@pytest.mark.parametrize(
    ("labels", "vertices", "message"),
    [
        ([0, 3], np.eye(3, 2), r"labels must lie in 0\.\.2"),
        ([0, 1], np.eye(3), "dimension"),
    ],
)
def test_vertex_alignment_rejects_bad_input(labels, vertices, message):
    with pytest.raises(ValueError, match=message):
        vertex_alignment(np.eye(2), labels, vertices)
