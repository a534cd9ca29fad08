"""Isotropic-regulariser paper: softmax vs softmax + isotropic regulariser."""

from __future__ import annotations

from sphere_engine.experiments.bases import DIGITS_CLASSIFIER, NMI, TRAIN_NORM_VAR
from sphere_engine.experiments.spec import Claim, Comparison, Experiment, Metric, Variant

ACCURACY = Metric("classifier_accuracy", "classifier acc", percent=True)
KNN = Metric("knn_accuracy", "kNN acc (10-NN)", percent=True)
AGGLOMERATIVE = Metric("agglomerative_nmi", "agglomerative NMI", percent=True)
SOFTMAX_NMI = Metric("clustering/softmax_nmi", "k-means NMI (softmax)", percent=True)

EXPERIMENT = Experiment(
    name="isotropic",
    title="Softmax ± isotropic regulariser (isotropic-loss paper and its reviewer)",
    description=(
        "A plain softmax classifier (linear head with bias) on digits, standard split, "
        "without and with the isotropic regulariser (η = 0.01): classifier accuracy, kNN "
        "accuracy, k-means and agglomerative NMI of the features, and k-means NMI of the "
        "softmax outputs (the reviewer's suggestion)."
    ),
    base={**DIGITS_CLASSIFIER, "evaluation": {"agglomerative": True}},
    variants=(
        Variant("softmax", {"regularizer": {"name": "none", "weight": 0.0}}),
        Variant("softmax + isotropic", {"regularizer": {"name": "isotropic", "weight": 0.01}}),
    ),
    metrics=(
        ACCURACY,
        KNN,
        Metric(NMI.key, "k-means NMI", True),
        AGGLOMERATIVE,
        SOFTMAX_NMI,
        TRAIN_NORM_VAR,
    ),
    claims=(
        Claim(
            "The isotropic regulariser improves k-means NMI of the features",
            (Comparison("nmi", "softmax + isotropic", "softmax"),),
        ),
        Claim(
            "The isotropic regulariser costs no classifier accuracy (at most 1 point less)",
            (
                Comparison(
                    "classifier_accuracy", "softmax + isotropic", "softmax", "≥", tolerance=1.0
                ),
            ),
        ),
    ),
    notes="Softmax-output NMI is the evaluation's `clustering/softmax_nmi` (k-means on the "
    "softmax probability vectors); agglomerative NMI is Ward linkage on the features.",
)
