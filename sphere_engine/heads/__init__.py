"""Classifier heads (learnable and fixed regular-polytope) and polytope geometry."""

from sphere_engine.heads.arc_face_head import ArcFaceHead
from sphere_engine.heads.classifier_head import ClassifierHead
from sphere_engine.heads.cos_face_head import CosFaceHead
from sphere_engine.heads.cosine_classifier_head import CosineClassifierHead
from sphere_engine.heads.linear_head import LinearHead
from sphere_engine.heads.norm_face_head import NormFaceHead
from sphere_engine.heads.polytope_heads import CubeHead, HadamardHead, OrthoplexHead, SimplexHead
from sphere_engine.heads.polytopes import (
    POLYTOPE_KINDS,
    polytope_angle,
    polytope_dim,
    polytope_vertices,
)
from sphere_engine.heads.registry import HEADS
from sphere_engine.heads.regular_polytope_head import RegularPolytopeHead
from sphere_engine.heads.sphere_face_head import SphereFaceHead

__all__ = [
    "HEADS",
    "POLYTOPE_KINDS",
    "ArcFaceHead",
    "ClassifierHead",
    "CosFaceHead",
    "CosineClassifierHead",
    "CubeHead",
    "HadamardHead",
    "LinearHead",
    "NormFaceHead",
    "OrthoplexHead",
    "RegularPolytopeHead",
    "SimplexHead",
    "SphereFaceHead",
    "polytope_angle",
    "polytope_dim",
    "polytope_vertices",
]
