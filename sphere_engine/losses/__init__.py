"""Pair losses on normalised embeddings and the classifier loss (see docs/architecture.md)."""

from sphere_engine.losses.base_loss import BaseLoss
from sphere_engine.losses.batch_hard_triplet_loss import BatchHardTripletLoss
from sphere_engine.losses.classifier_loss import ClassifierLoss
from sphere_engine.losses.contrastive_loss import ContrastiveLoss
from sphere_engine.losses.multi_similarity_loss import MultiSimilarityLoss
from sphere_engine.losses.npair_loss import NPairLoss
from sphere_engine.losses.ntxent_loss import NTXentLoss
from sphere_engine.losses.registry import LOSSES
from sphere_engine.losses.semihard_triplet_loss import SemiHardTripletLoss
from sphere_engine.losses.supcon_loss import SupConLoss
from sphere_engine.losses.triplet_margin_loss import TripletMarginLoss
from sphere_engine.losses.tuplet_margin_loss import TupletMarginLoss

__all__ = [
    "LOSSES",
    "BaseLoss",
    "BatchHardTripletLoss",
    "ClassifierLoss",
    "ContrastiveLoss",
    "MultiSimilarityLoss",
    "NPairLoss",
    "NTXentLoss",
    "SemiHardTripletLoss",
    "SupConLoss",
    "TripletMarginLoss",
    "TupletMarginLoss",
]
