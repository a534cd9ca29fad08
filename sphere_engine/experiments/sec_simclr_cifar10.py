"""SEC rebuttal, Table 1 at its own scale: SimCLR (NT-Xent) with a ResNet-50 on CIFAR-10,
with and without 0.1·SEC, judged by a linear probe."""

from __future__ import annotations

from sphere_engine.experiments.bases import NMI, TRAIN_NORM_VAR
from sphere_engine.experiments.sec_simclr import PROBE
from sphere_engine.experiments.spec import Claim, Comparison, Experiment, Metric, Variant

BATCH = 256
EPOCHS = 150
CIFAR10_TRAIN = 50_000

EXPERIMENT = Experiment(
    name="sec-simclr-cifar10",
    title="SimCLR ± 0.1·SEC, ResNet-50 on CIFAR-10 (SEC rebuttal, Table 1)",
    description=(
        f"NT-Xent (temperature 0.5, two augmented views), ResNet-50 (CIFAR stem), 128-d, "
        f"batch {BATCH}, SGD with cosine decay for {EPOCHS} epochs on CIFAR-10, without and "
        "with SEC (η = 0.1); accuracy of a linear probe on the frozen embeddings."
    ),
    base={
        "data": {
            "name": "cifar10",
            "split": "standard",
            "batch_size": BATCH,
            "samples_per_class": 0,
        },
        "model": {"name": "resnet50", "embedding_dim": 128},
        "objective": {"kind": "loss", "name": "ntxent", "options": {"temperature": 0.5}},
        "regularizer": {"name": "none", "weight": 0.0},
        "optimizer": {"name": "sgd", "lr": 0.3, "momentum": 0.9, "weight_decay": 1e-6},
        "schedule": {"name": "cosine", "warmup_steps": 500},
        "training": {"device": "cuda", "amp": "bf16", "channels_last": True},
        "diagnostics": {"tracked_samples": 16, "snapshot_size": 2000, "log_every": 10},
        "evaluation": {"linear_probe": "on"},
    },
    variants=(
        Variant("NT-Xent", {}, {PROBE: 86.63}),
        Variant(
            "NT-Xent + 0.1·SEC", {"regularizer": {"name": "sec", "weight": 0.1}}, {PROBE: 87.0}
        ),
    ),
    metrics=(Metric(PROBE, "linear probe acc", percent=True), NMI, TRAIN_NORM_VAR),
    claims=(
        Claim(
            "SEC improves the linear-probe accuracy",
            (Comparison(PROBE, "NT-Xent + 0.1·SEC", "NT-Xent"),),
        ),
    ),
    seeds=(0,),
    steps=EPOCHS * CIFAR10_TRAIN // BATCH,
    needs_data_root=True,
    needs_gpu=True,
    notes="Needs CIFAR-10 under --data-root (cifar-10-batches-py) and a GPU. The views are "
    "SphereScope's batch augmentation (crop, flip, noise), not SimCLR's colour jitter; lr "
    "0.3 and weight decay 1e-6 are SimCLR's own settings (the rebuttal gives none).",
)
