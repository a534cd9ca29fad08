"""Adversarial robustness evaluation: L∞ FGSM / PGD attacks and curves over ε."""

from sphere_engine.robustness.attacks import (
    classification_loss,
    embedding_shift_loss,
    fgsm,
    pgd,
)
from sphere_engine.robustness.evaluate import ATTACKS, robustness_accuracy, robustness_recall

__all__ = [
    "ATTACKS",
    "classification_loss",
    "embedding_shift_loss",
    "fgsm",
    "pgd",
    "robustness_accuracy",
    "robustness_recall",
]
