"""Vertices, dimensions and angles of the regular polytopes used as fixed classifiers.

RePoNets (Pernici et al.): the class weights are the unit-normalised vertices of a
regular polytope that exists in every dimension, plus the Hadamard fixed classifier
(Hoffer et al. 2018). Kinds and their minimal dimension for K classes:

- ``simplex``: d = K − 1, pairwise cosine −1/d, angle φ = arccos(−1/d).
- ``orthoplex``: d = ⌈K/2⌉, vertices ±e_i, angle between connected vertices π/2.
- ``cube``: d = ⌈log2 K⌉, vertices {±1/√d}^d (first K), nearest angle arccos((d − 2)/d).
- ``hadamard``: rows of a Sylvester Hadamard matrix, mutually orthogonal; d is the
  smallest power of two ≥ K (Sylvester's construction exists only for powers of two).

Angles are in radians. All vertex sets are built in their minimal dimension and padded
with zero coordinates when a larger ``dim`` is asked for.
"""

from __future__ import annotations

import math

import torch

POLYTOPE_KINDS: tuple[str, ...] = ("simplex", "orthoplex", "cube", "hadamard")


def polytope_dim(kind: str, num_classes: int) -> int:
    """Minimal dimension d holding ``num_classes`` vertices of polytope ``kind``."""
    _check_kind(kind)
    _check_num_classes(num_classes)
    if kind == "simplex":
        return num_classes - 1
    if kind == "orthoplex":
        return math.ceil(num_classes / 2)
    if kind == "cube":
        return max(1, (num_classes - 1).bit_length())  # ⌈log2 K⌉ in exact integers
    return 1 << (num_classes - 1).bit_length()  # hadamard: smallest power of two ≥ K


def polytope_vertices(kind: str, num_classes: int, dim: int | None = None) -> torch.Tensor:
    """Unit-norm vertices, shape (K, dim): row j is class j's fixed weight.

    ``dim`` defaults to ``polytope_dim(kind, num_classes)``; a larger ``dim`` pads zero
    coordinates, a smaller one raises ``ValueError`` naming the minimal dimension.
    Returned in the default floating dtype (built in float64).
    """
    minimal = polytope_dim(kind, num_classes)
    if dim is None:
        dim = minimal
    if isinstance(dim, bool) or not isinstance(dim, int) or dim < minimal:
        hint = ""
        if kind == "cube" and isinstance(dim, int) and not isinstance(dim, bool) and dim >= 1:
            hint = f" (a {dim}-cube has only {2**dim} vertices)"
        raise ValueError(
            f"dim={dim!r} is too small for a {kind} with num_classes={num_classes}{hint}; "
            f"allowed: an integer >= {minimal}"
        )
    builders = {
        "simplex": _simplex,
        "orthoplex": _orthoplex,
        "cube": _cube,
        "hadamard": _hadamard,
    }
    vertices = builders[kind](num_classes, minimal)
    padded = torch.zeros(num_classes, dim, dtype=torch.float64)
    padded[:, :minimal] = vertices
    return padded.to(torch.get_default_dtype())


def polytope_angle(kind: str, dim: int) -> float:
    """Angle φ (radians) between a vertex and its nearest vertices in the ``dim``-polytope.

    simplex arccos(−1/d), orthoplex π/2 (π for d = 1, where the two vertices ±e_1 are
    antipodal), cube arccos((d − 2)/d), hadamard π/2.
    """
    _check_kind(kind)
    if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
        raise ValueError(f"dim={dim!r} is invalid; allowed: an integer >= 1")
    if kind == "simplex":
        return math.acos(-1.0 / dim)
    if kind == "orthoplex":
        return math.pi if dim == 1 else math.pi / 2
    if kind == "cube":
        return math.acos((dim - 2) / dim)
    if dim & (dim - 1):
        raise ValueError(
            f"dim={dim} is invalid for a Sylvester Hadamard matrix; allowed: a power of two"
        )
    return math.pi / 2


def _simplex(num_classes: int, dim: int) -> torch.Tensor:
    """e_1 … e_d and α·Σe_i with α = (1 − √(d+1))/d, centred, unit rows: (d + 1) × d."""
    alpha = (1.0 - math.sqrt(dim + 1)) / dim
    vertices = torch.cat(
        [torch.eye(dim, dtype=torch.float64), torch.full((1, dim), alpha, dtype=torch.float64)]
    )
    vertices = vertices - vertices.mean(dim=0, keepdim=True)
    return vertices / vertices.norm(dim=1, keepdim=True)


def _orthoplex(num_classes: int, dim: int) -> torch.Tensor:
    """+e_1, −e_1, +e_2, −e_2, … (first K): classes 2i and 2i+1 are antipodal."""
    vertices = torch.zeros(num_classes, dim, dtype=torch.float64)
    for j in range(num_classes):
        vertices[j, j // 2] = 1.0 if j % 2 == 0 else -1.0
    return vertices


def _cube(num_classes: int, dim: int) -> torch.Tensor:
    """{±1/√d}^d in binary order (bit set → −), first K; vertex 0 is all +1/√d."""
    index = torch.arange(num_classes).unsqueeze(1)
    bits = (index >> torch.arange(dim - 1, -1, -1)) & 1
    return (1.0 - 2.0 * bits.to(torch.float64)) / math.sqrt(dim)


def _hadamard(num_classes: int, dim: int) -> torch.Tensor:
    """First K rows of the Sylvester Hadamard matrix H_d (H_2n = [[H, H], [H, −H]]), / √d."""
    matrix = torch.ones(1, 1, dtype=torch.float64)
    while matrix.shape[0] < dim:
        matrix = torch.cat([torch.cat([matrix, matrix], 1), torch.cat([matrix, -matrix], 1)])
    return matrix[:num_classes] / math.sqrt(dim)


def _check_kind(kind: str) -> None:
    if kind not in POLYTOPE_KINDS:
        raise ValueError(f"unknown polytope kind {kind!r}; allowed: {', '.join(POLYTOPE_KINDS)}")


def _check_num_classes(num_classes: int) -> None:
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 2:
        raise ValueError(
            f"num_classes={num_classes!r} is invalid for a polytope; allowed: an integer >= 2"
        )
