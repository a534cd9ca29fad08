"""The registered fixed polytope heads, one per kind.

Kept in one file on purpose: each is a one-line subclass that only names its polytope;
all behaviour lives in ``RegularPolytopeHead``.
"""

from __future__ import annotations

from sphere_engine.heads.registry import HEADS
from sphere_engine.heads.regular_polytope_head import RegularPolytopeHead


@HEADS.register("simplex")
class SimplexHead(RegularPolytopeHead):
    """Fixed d-simplex classifier, d = K − 1, vertex angle arccos(−1/d)."""

    kind = "simplex"


@HEADS.register("orthoplex")
class OrthoplexHead(RegularPolytopeHead):
    """Fixed d-orthoplex classifier (±e_i), d = ⌈K/2⌉, vertex angle π/2."""

    kind = "orthoplex"


@HEADS.register("cube")
class CubeHead(RegularPolytopeHead):
    """Fixed d-cube classifier ({±1/√d}^d), d = ⌈log2 K⌉, vertex angle arccos((d − 2)/d)."""

    kind = "cube"


@HEADS.register("hadamard")
class HadamardHead(RegularPolytopeHead):
    """Fixed Hadamard classifier (Hoffer et al. 2018), d = smallest power of two ≥ K."""

    kind = "hadamard"
