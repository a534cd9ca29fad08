"""The SEC paper's main table: four losses ± SEC on CUB, Cars196, SOP and In-Shop with an
ImageNet-pretrained BN-Inception and a 512-d embedding (SCIENCE.md, "Research-scale
settings"). One experiment per dataset; they need the data and a GPU."""

from __future__ import annotations

from typing import Any

from sphere_engine.experiments.bases import NMI, R1, TRAIN_NORM_VAR, sec
from sphere_engine.experiments.spec import Claim, Comparison, Experiment, Variant

SEC_WEIGHT = 0.5
#: loss registry name, label, and the label's key in the tables below
LOSSES = (
    ("triplet", "triplet", "T"),
    ("semihard_triplet", "semihard", "SHT"),
    ("npair", "normalised N-pair", "NNP"),
    ("multi_similarity", "multi-similarity", "MS"),
)
#: Recall@1 (%) without → with SEC, the paper's main table
PAPER_R1: dict[str, dict[str, tuple[float, float]]] = {
    "cub200": {
        "T": (53.34, 60.82),
        "SHT": (65.31, 67.35),
        "NNP": (61.36, 66.0),
        "MS": (66.14, 68.79),
    },
    "cars196": {
        "T": (60.79, 67.89),
        "SHT": (80.17, 85.19),
        "NNP": (78.59, 82.29),
        "MS": (84.07, 85.73),
    },
    "sop": {"T": (62.69, 68.86), "SHT": (74.46, 77.59), "NNP": (74.3, 76.89), "MS": (76.29, 78.67)},
    "inshop": {
        "T": (82.12, 85.29),
        "SHT": (87.16, 89.68),
        "NNP": (86.43, 88.63),
        "MS": (88.11, 89.87),
    },
}
#: (iterations, lr backbone, lr head, decay factor, decay iterations) per dataset and loss
SCHEDULES: dict[str, dict[str, tuple[int, float, float, float, list[int]]]] = {
    "cub200": {
        "T": (8000, 5e-6, 2.5e-6, 0.1, [5000]),
        "SHT": (8000, 5e-6, 2.5e-6, 0.1, [5000]),
        "NNP": (8000, 1e-5, 5e-6, 0.1, [5000]),
        "MS": (8000, 5e-7, 2.5e-5, 0.1, [5000]),
    },
    "cars196": {
        "T": (8000, 1e-5, 1e-5, 0.5, [4000, 6000]),
        "SHT": (8000, 1e-5, 1e-5, 0.5, [4000, 6000]),
        "NNP": (8000, 1e-5, 1e-5, 0.5, [4000, 6000]),
        "MS": (8000, 4e-5, 4e-5, 0.1, [2000]),
    },
    "sop": {key: (12000, 5e-4, 1e-4, 0.1, [6000]) for key in ("T", "SHT", "NNP", "MS")},
    "inshop": {key: (12000, 5e-4, 1e-4, 0.1, [6000]) for key in ("T", "SHT", "NNP", "MS")},
}
TITLES = {
    "cub200": "CUB-200-2011",
    "cars196": "Cars196",
    "sop": "Stanford Online Products",
    "inshop": "In-Shop",
}
#: P×K batches of 120: CUB and Cars have ~60 images a class, SOP and In-Shop ~5.
SAMPLES_PER_CLASS = {"cub200": 4, "cars196": 4, "sop": 2, "inshop": 2}


def base_config(dataset: str) -> dict[str, Any]:
    """The shared part of every run on ``dataset`` (the loss and lr come per variant)."""
    evaluation = {"retrieval_protocol": "query_gallery"} if dataset == "inshop" else {}
    recall_ks = [1, 10, 20, 30] if dataset == "inshop" else [1, 2, 4, 8]
    return {
        "data": {
            "name": dataset,
            "batch_size": 120,
            "samples_per_class": SAMPLES_PER_CLASS[dataset],
            "image_size": 227,
        },
        "model": {
            "name": "bninception",
            "embedding_dim": 512,
            "pretrained": "true",
            "frozen_bn": True,
        },
        "objective": {"kind": "loss", "name": "triplet"},
        "regularizer": {"name": "none", "weight": 0.0},
        "optimizer": {"name": "adam", "lr": 1e-5, "weight_decay": 0.0},
        "schedule": {"name": "step", "milestones": [], "gamma": 0.1},
        "training": {"device": "cuda", "amp": "bf16", "channels_last": True},
        "diagnostics": {
            "tracked_samples": 16,
            "snapshot_size": 2000,
            "log_every": 10,
            "eval_max_samples": 0,
            "recall_ks": recall_ks,
        },
        "evaluation": evaluation,
    }


def variant_name(label: str, with_sec: bool) -> str:
    return f"{label} + SEC" if with_sec else label


def _variants(dataset: str) -> tuple[Variant, ...]:
    variants = []
    for loss, label, key in LOSSES:
        _, lr, head_lr, gamma, milestones = SCHEDULES[dataset][key]
        for with_sec in (False, True):
            overrides = {
                "objective": {"name": loss},
                "optimizer": {"lr": lr, "head_lr": head_lr},
                "schedule": {"milestones": milestones, "gamma": gamma},
                **(sec(SEC_WEIGHT) if with_sec else {}),
            }
            reference = {"recall@1": PAPER_R1[dataset][key][int(with_sec)]}
            variants.append(Variant(variant_name(label, with_sec), overrides, reference))
    return tuple(variants)


def benchmark_experiment(dataset: str) -> Experiment:
    iterations = SCHEDULES[dataset]["T"][0]
    return Experiment(
        name=f"sec-{dataset}",
        title=f"SEC on {TITLES[dataset]}, BN-Inception 512-d (SEC paper, main table)",
        description=(
            f"Triplet, semihard triplet, normalised N-pair and multi-similarity, each without "
            f"and with SEC (η = {SEC_WEIGHT}), on {TITLES[dataset]} in its official layout and "
            "split; ImageNet-pretrained BN-Inception (frozen BatchNorm statistics), 227 px, "
            "batch 120 (P×K), Adam with the rebuttal's learning rates and step decay."
        ),
        base=base_config(dataset),
        variants=_variants(dataset),
        metrics=(R1, NMI, TRAIN_NORM_VAR),
        claims=tuple(
            Claim(
                f"SEC improves R@1 of the {label} loss",
                (Comparison("recall@1", variant_name(label, True), variant_name(label, False)),),
            )
            for _, label, _ in LOSSES
        ),
        seeds=(0,),
        steps=iterations,
        needs_data_root=True,
        needs_gpu=True,
        analyses=("loss_pairs",),
        pairs=tuple(
            (variant_name(label, False), variant_name(label, True)) for _, label, _ in LOSSES
        ),
        paper_dataset=dataset,
        notes="Needs the extracted dataset (--data-root) and a GPU; BN-Inception's ImageNet "
        "weights come from model.pretrained (set true for a cached file, or --set "
        "model.pretrained=<path>).",
    )


EXPERIMENTS = tuple(benchmark_experiment(dataset) for dataset in SCHEDULES)
