import math

import pytest
import torch

from sphere_engine.heads import POLYTOPE_KINDS, polytope_angle, polytope_dim, polytope_vertices

CLASS_COUNTS = [2, 3, 4, 5, 7, 8, 10, 47]


def _cosines(vertices: torch.Tensor) -> torch.Tensor:
    return vertices.double() @ vertices.double().T


def _off_diagonal(matrix: torch.Tensor) -> torch.Tensor:
    return matrix[~torch.eye(matrix.shape[0], dtype=torch.bool)]


@pytest.mark.parametrize("num_classes", CLASS_COUNTS)
def test_dimensions(num_classes):
    log2 = math.ceil(math.log2(num_classes))
    assert polytope_dim("simplex", num_classes) == num_classes - 1
    assert polytope_dim("orthoplex", num_classes) == math.ceil(num_classes / 2)
    assert polytope_dim("cube", num_classes) == log2
    assert polytope_dim("hadamard", num_classes) == 2**log2


@pytest.mark.parametrize("kind", POLYTOPE_KINDS)
@pytest.mark.parametrize("num_classes", CLASS_COUNTS)
def test_vertices_have_shape_unit_norm_and_are_distinct(kind, num_classes):
    vertices = polytope_vertices(kind, num_classes)
    assert vertices.shape == (num_classes, polytope_dim(kind, num_classes))
    assert vertices.dtype == torch.get_default_dtype()
    torch.testing.assert_close(vertices.norm(dim=1), torch.ones(num_classes))
    assert _off_diagonal(_cosines(vertices)).max() < 1 - 1e-6


@pytest.mark.parametrize("num_classes", [2, 3, 10, 20])
def test_simplex_pairwise_cosine_is_minus_one_over_d(num_classes):
    vertices = polytope_vertices("simplex", num_classes)
    d = num_classes - 1
    off = _off_diagonal(_cosines(vertices))
    torch.testing.assert_close(off, torch.full_like(off, -1.0 / d), atol=1e-6, rtol=0)
    torch.testing.assert_close(vertices.sum(dim=0), torch.zeros(d), atol=1e-6, rtol=0)


@pytest.mark.parametrize("num_classes", [2, 5, 8])
def test_orthoplex_is_plus_minus_basis_with_antipodal_class_pairs(num_classes):
    vertices = polytope_vertices("orthoplex", num_classes)
    off = _off_diagonal(_cosines(vertices))
    assert set(off.round(decimals=6).tolist()) <= {0.0, -1.0}
    assert vertices[0].tolist() == [1.0] + [0.0] * (vertices.shape[1] - 1)
    for i in range(0, num_classes - 1, 2):
        torch.testing.assert_close(vertices[i + 1], -vertices[i])


@pytest.mark.parametrize("num_classes", [3, 4, 5, 8, 10, 47])
def test_cube_vertices_and_nearest_neighbour_angle(num_classes):
    vertices = polytope_vertices("cube", num_classes)
    d = vertices.shape[1]
    torch.testing.assert_close(vertices.abs(), torch.full_like(vertices, 1 / math.sqrt(d)))
    nearest = _off_diagonal(_cosines(vertices)).max().item()
    assert math.acos(min(nearest, 1.0)) == pytest.approx(math.acos((d - 2) / d), abs=1e-6)


@pytest.mark.parametrize("num_classes", [2, 3, 8, 10])
def test_hadamard_rows_are_mutually_orthogonal(num_classes):
    vertices = polytope_vertices("hadamard", num_classes).double()
    torch.testing.assert_close(vertices @ vertices.T, torch.eye(num_classes, dtype=torch.float64))
    d = vertices.shape[1]
    torch.testing.assert_close(vertices.abs(), torch.full_like(vertices, 1 / math.sqrt(d)))


@pytest.mark.parametrize("kind", POLYTOPE_KINDS)
@pytest.mark.parametrize("num_classes", CLASS_COUNTS)
def test_angle_matches_the_nearest_vertex_angle(kind, num_classes):
    vertices = polytope_vertices(kind, num_classes)
    nearest = _off_diagonal(_cosines(vertices)).max().clamp(-1, 1).item()
    angle = polytope_angle(kind, polytope_dim(kind, num_classes))
    assert angle == pytest.approx(math.acos(nearest), abs=1e-6)


def test_reference_angles():
    assert math.degrees(polytope_angle("simplex", 9)) == pytest.approx(96.38, abs=0.005)
    assert polytope_angle("orthoplex", 5) == pytest.approx(math.pi / 2)
    assert polytope_angle("cube", 3) == pytest.approx(math.acos(1 / 3))
    assert polytope_angle("cube", 2) == pytest.approx(math.pi / 2)
    assert polytope_angle("hadamard", 16) == pytest.approx(math.pi / 2)


def test_larger_dim_pads_zero_coordinates():
    vertices = polytope_vertices("simplex", 4, dim=6)
    assert vertices.shape == (4, 6)
    assert torch.count_nonzero(vertices[:, 3:]) == 0
    torch.testing.assert_close(vertices[:, :3], polytope_vertices("simplex", 4))


def test_unknown_kind_lists_kinds():
    with pytest.raises(ValueError, match="simplex, orthoplex, cube, hadamard"):
        polytope_vertices("dodecahedron", 4)
    with pytest.raises(ValueError, match="allowed"):
        polytope_angle("sphere", 3)


@pytest.mark.parametrize("num_classes", [1, 0, -3])
def test_fewer_than_two_classes_is_rejected(num_classes):
    with pytest.raises(ValueError, match="num_classes"):
        polytope_dim("simplex", num_classes)


def test_too_small_dim_names_the_minimum():
    with pytest.raises(ValueError, match=r"8 vertices.*>= 4"):
        polytope_vertices("cube", 10, dim=3)
    with pytest.raises(ValueError, match=">= 16"):
        polytope_vertices("hadamard", 10, dim=12)
    with pytest.raises(ValueError, match=">= 9"):
        polytope_vertices("simplex", 10, dim=8)


def test_bad_angle_dimension():
    with pytest.raises(ValueError, match="dim=0"):
        polytope_angle("simplex", 0)
    with pytest.raises(ValueError, match="power of two"):
        polytope_angle("hadamard", 12)
