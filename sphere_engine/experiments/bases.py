"""Base configs and metric columns shared by the declared experiments."""

from __future__ import annotations

from typing import Any

from sphere_engine.experiments.spec import Metric

#: Metric learning on digits: class-disjoint split (train 0-4, test 5-9), P×K batches,
#: an MLP and SGD, like the SEC paper's setup scaled down to what a CPU trains in seconds.
DIGITS_PAIR_LOSS: dict[str, Any] = {
    "data": {"name": "digits", "split": "class_disjoint", "batch_size": 40, "samples_per_class": 8},
    "model": {"name": "mlp", "embedding_dim": 32},
    "objective": {"kind": "loss", "name": "semihard_triplet"},
    "regularizer": {"name": "none", "weight": 0.0},
    "optimizer": {"name": "sgd", "lr": 0.05},
    "diagnostics": {"tracked_samples": 16, "snapshot_size": 500, "log_every": 5},
}

#: Classification on digits: the standard split (same classes in train and test).
DIGITS_CLASSIFIER: dict[str, Any] = {
    "data": {"name": "digits", "split": "standard", "batch_size": 64, "samples_per_class": 0},
    "model": {"name": "mlp", "embedding_dim": 32},
    "objective": {"kind": "head", "name": "linear"},
    "regularizer": {"name": "none", "weight": 0.0},
    "optimizer": {"name": "adam", "lr": 1e-3},
    "diagnostics": {"tracked_samples": 16, "snapshot_size": 500, "log_every": 5},
}

NO_REG = {"regularizer": {"name": "none", "weight": 0.0}}


def sec(weight: float) -> dict[str, Any]:
    return {"regularizer": {"name": "sec", "weight": weight}}


NMI = Metric("nmi", "NMI", percent=True)
F1 = Metric("f1", "F1", percent=True)
R1 = Metric("recall@1", "R@1", percent=True)
MAP_R = Metric("map@r", "MAP@R", percent=True)
TRAIN_NORM_VAR = Metric("train_mean:norm/var", "train norm var")
TEST_NORM_VAR = Metric("norm/var", "test norm var")
RETRIEVAL = (NMI, F1, R1, MAP_R, TRAIN_NORM_VAR)
