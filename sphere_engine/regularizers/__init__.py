"""Norm regularisers for embeddings (see docs/architecture.md, SCIENCE.md §2)."""

from sphere_engine.regularizers.base_regularizer import BaseRegularizer
from sphere_engine.regularizers.center_loss import CenterLoss
from sphere_engine.regularizers.isotropic_regularizer import IsotropicRegularizer
from sphere_engine.regularizers.l2_norm_regularizer import L2NormRegularizer
from sphere_engine.regularizers.registry import (
    REGULARIZERS,
)
from sphere_engine.regularizers.spherical_embedding_constraint import (
    SphericalEmbeddingConstraint,
)

__all__ = [
    "REGULARIZERS",
    "BaseRegularizer",
    "CenterLoss",
    "IsotropicRegularizer",
    "L2NormRegularizer",
    "SphericalEmbeddingConstraint",
]
