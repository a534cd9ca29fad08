"""SEC rebuttal, Table 1: NT-Xent (SimCLR) with and without 0.1·SEC, linear-probe accuracy."""

from __future__ import annotations

from sphere_engine.experiments.bases import NMI, R1, TRAIN_NORM_VAR
from sphere_engine.experiments.spec import Claim, Comparison, Experiment, Metric, Variant

PROBE = "linear_probe/accuracy"

EXPERIMENT = Experiment(
    name="sec-simclr",
    title="Self-supervised NT-Xent ± SEC (SEC rebuttal, Table 1)",
    description=(
        "NT-Xent (temperature 0.5, two augmented views per image) on digits, standard split, "
        "without and with SEC (η = 0.1); accuracy of a linear probe on the frozen embeddings."
    ),
    base={
        "data": {"name": "digits", "split": "standard", "batch_size": 64, "samples_per_class": 0},
        "model": {"name": "mlp", "embedding_dim": 32},
        "objective": {"kind": "loss", "name": "ntxent", "options": {"temperature": 0.5}},
        "regularizer": {"name": "none", "weight": 0.0},
        "optimizer": {"name": "adam", "lr": 1e-3},
        "diagnostics": {"tracked_samples": 16, "snapshot_size": 500, "log_every": 5},
    },
    variants=(
        Variant("NT-Xent", {"regularizer": {"name": "none", "weight": 0.0}}),
        Variant("NT-Xent + 0.1·SEC", {"regularizer": {"name": "sec", "weight": 0.1}}),
    ),
    metrics=(Metric(PROBE, "linear probe acc", percent=True), R1, NMI, TRAIN_NORM_VAR),
    claims=(
        Claim(
            "SEC improves the linear-probe accuracy",
            (Comparison(PROBE, "NT-Xent + 0.1·SEC", "NT-Xent"),),
        ),
        Claim(
            "SEC lowers the training norm variance",
            (Comparison("train_mean:norm/var", "NT-Xent + 0.1·SEC", "NT-Xent", "<"),),
        ),
    ),
    notes="The linear probe (`linear_probe/accuracy`): logistic regression on frozen "
    "train-split embeddings, accuracy on the test split (on by default for NT-Xent on the "
    "standard split).",
)
