"""Adversarial robustness evaluation: L∞ FGSM / PGD attacks and curves over ε."""

from sphere_engine.catalogue.facts import ATTACKS
from sphere_engine.robustness.attack_settings import AttackSettings
from sphere_engine.robustness.attacks import (
    classification_loss,
    embedding_shift_loss,
    fgsm,
    pgd,
)
from sphere_engine.robustness.evaluate import robustness_accuracy, robustness_recall

__all__ = [
    "ATTACKS",
    "AttackSettings",
    "classification_loss",
    "embedding_shift_loss",
    "fgsm",
    "pgd",
    "robustness_accuracy",
    "robustness_recall",
]
