"""Study presets: fair comparisons declared as study files (``worker.study.spec``), beside
the experiments. ``spherescope study run NAME`` and the Launch page's Study mode offer
them; a study's ``experiment`` key (its preset's name) lets the Report page show its
result.

- ``study-cpu``: triplet and multi-similarity, each without and with SEC, 8 trials per
  arm, 2 folds, 3 reproductions, on scikit-learn's bundled digits (offline): its 5
  training classes give folds of 2 and 3 validation classes, so a batch holds 2 classes
  of 16 samples (P × K = 2 × 16); sized for 2 CPU cores. (Synthetic Gaussian classes
  were tried first: a class-disjoint split of random class means leaves nothing to
  learn that transfers, and every arm stayed at chance.)
- ``mlrc-cub200`` / ``mlrc-cars196`` / ``mlrc-sop``: "A Metric Learning Reality Check"
  (SCIENCE.md §9): BN-Inception with frozen BatchNorm, 128-d embedding, RMSprop lr 1e-6
  weight decay 1e-4 momentum 0.9, batch 32 with 4 per class (SOP: 2, it has ~5 images a
  class), images resized to 256 (``data.resize``) then cut to 227-px crops, the
  training random-resized crop covering 16–100 % of the image (``data.crop_scale``;
  torchvision's default, kept elsewhere, is 8–100 %), 100
  iterations per evaluation with early stopping after 9 evaluations without
  improvement, 50 trials per arm, 4 folds, 10 reproductions.
  They need the dataset's files (``--set data.root=...``) and a GPU.
"""

from __future__ import annotations

import copy
from typing import Any

LOSS_SPACES: dict[str, dict[str, Any]] = {
    "triplet": {"objective.options.margin": {"type": "float", "low": 0.01, "high": 0.5}},
    "multi_similarity": {
        "objective.options.alpha": {"type": "log_float", "low": 0.01, "high": 100.0},
        "objective.options.beta": {"type": "log_float", "low": 0.01, "high": 100.0},
        "objective.options.thresh": {"type": "float", "low": 0.0, "high": 1.0},
    },
}
SEC_WEIGHT = {"regularizer.weight": {"type": "log_float", "low": 0.01, "high": 2.0}}
LOSS_LABELS = {"triplet": "triplet", "multi_similarity": "ms"}


def four_arms(extra_space: dict[str, Any] | None = None) -> dict[str, Any]:
    """Triplet and multi-similarity, each without and with SEC (its weight searched)."""
    arms = {}
    for loss, label in LOSS_LABELS.items():
        for with_sec in (False, True):
            overrides: dict[str, Any] = {"objective.name": loss}
            space = {**copy.deepcopy(LOSS_SPACES[loss]), **copy.deepcopy(extra_space or {})}
            if with_sec:
                overrides["regularizer.name"] = "sec"
                space.update(copy.deepcopy(SEC_WEIGHT))
            arms[f"{label}-sec" if with_sec else label] = {"set": overrides, "space": space}
    return arms


CPU_STUDY: dict[str, Any] = {
    "name": "study-cpu",
    "experiment": "study-cpu",
    "metric": "map@r",
    "folds": 2,
    "trials": 8,
    "reproductions": 3,
    "sampler": "tpe",
    "seed": 0,
    "pruning": {"median": True, "warmup_trials": 3, "warmup_evaluations": 1},
    "base": {
        "data": {
            "name": "digits", "split": "class_disjoint", "batch_size": 32,
            "samples_per_class": 16, "num_workers": 0,
        },
        "model": {"name": "mlp", "embedding_dim": 32},
        "objective": {"kind": "loss", "name": "triplet"},
        "optimizer": {"name": "adam", "lr": 1e-3},
        "training": {"steps": 300, "device": "cpu"},
        "diagnostics": {
            "log_every": 5, "eval_every": 100, "tracked_samples": 8,
        },
        "evaluation": {"verification": False},
    },
    "arms": four_arms({"optimizer.lr": {"type": "log_float", "low": 1e-4, "high": 1e-2}}),
}  # fmt: skip

MLRC_SAMPLES_PER_CLASS = {"cub200": 4, "cars196": 4, "sop": 2}
#: MLRC's crops (SCIENCE.md §9): train Resize(256) + RandomResizedCrop(227, scale=(0.16,
#: 1)) + flip, test Resize(256) + CenterCrop(227).
MLRC_CROP_SCALE = (0.16, 1.0)
MLRC_RESIZE = 256


def mlrc_study(dataset: str) -> dict[str, Any]:
    name = f"mlrc-{dataset}"
    return {
        "name": name,
        "experiment": name,
        "metric": "map@r",
        "folds": 4,
        "trials": 50,
        "reproductions": 10,
        "sampler": "tpe",
        "seed": 0,
        "base": {
            "data": {
                "name": dataset, "split": "class_disjoint", "batch_size": 32,
                "samples_per_class": MLRC_SAMPLES_PER_CLASS[dataset], "image_size": 227,
                "crop_scale": list(MLRC_CROP_SCALE), "resize": MLRC_RESIZE,
            },
            "model": {
                "name": "bninception", "embedding_dim": 128, "pretrained": "true",
                "frozen_bn": True,
            },
            "objective": {"kind": "loss", "name": "triplet"},
            "optimizer": {"name": "rmsprop", "lr": 1e-6, "weight_decay": 1e-4, "momentum": 0.9},
            "training": {"steps": 20000, "device": "cuda", "early_stop_patience": 9},
            "diagnostics": {"eval_every": 100, "eval_max_samples": 0, "log_every": 10},
            "evaluation": {"verification": False},
        },
        "arms": four_arms(),
    }  # fmt: skip


STUDY_PRESETS: dict[str, dict[str, Any]] = {
    "study-cpu": CPU_STUDY,
    **{f"mlrc-{d}": mlrc_study(d) for d in ("cub200", "cars196", "sop")},
}
STUDY_TITLES: dict[str, str] = {
    "study-cpu": "Triplet vs multi-similarity, ± SEC, on synthetic data (CPU, ~45 min)",
    "mlrc-cub200": "MLRC protocol on CUB-200-2011 (BN-Inception 128-d; GPU)",
    "mlrc-cars196": "MLRC protocol on Cars196 (BN-Inception 128-d; GPU)",
    "mlrc-sop": "MLRC protocol on Stanford Online Products (BN-Inception 128-d; GPU)",
}


def study_preset(name: str) -> dict[str, Any]:
    """A copy of the study preset ``name``; ``ValueError`` listing them otherwise."""
    if name not in STUDY_PRESETS:
        raise ValueError(
            f"study preset {name!r} is unknown; choose one of {', '.join(STUDY_PRESETS)}"
        )
    return copy.deepcopy(STUDY_PRESETS[name])
