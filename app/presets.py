"""Launch presets that reproduce the experiments of SCIENCE.md, as lists of config dicts.

Each preset is a small sweep: several partial run configs (sections as in
``RunConfig.from_dict``; missing settings take their defaults) with a name each. They
run on scikit-learn's bundled digits so that they work offline on a CPU in minutes;
the MNIST preset needs the MNIST files under ``data.root``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

Config = dict[str, Any]


@dataclass(frozen=True)
class Preset:
    key: str
    title: str
    description: str
    configs: list[Config] = field(default_factory=list)
    names: list[str] = field(default_factory=list)

    def runs(self) -> list[tuple[str, Config]]:
        """(run name, deep copy of the config) for every run of the preset."""
        return [
            (name, copy.deepcopy(config))
            for name, config in zip(self.names, self.configs, strict=True)
        ]


def _merge(base: Config, **sections: Config) -> Config:
    """``base`` with some settings of some sections replaced (a new dict)."""
    result = copy.deepcopy(base)
    for section, values in sections.items():
        result.setdefault(section, {}).update(copy.deepcopy(values))
    return result


# The SEC paper's setting, scaled to digits: semihard triplet on a class-disjoint split.
_METRIC_BASE: Config = {
    "data": {"name": "digits", "split": "class_disjoint", "batch_size": 40, "samples_per_class": 8},
    "model": {"name": "mlp", "embedding_dim": 32},
    "objective": {"kind": "loss", "name": "semihard_triplet"},
    "regularizer": {"name": "none", "weight": 0.0},
    "optimizer": {"name": "sgd", "lr": 0.05, "momentum": 0.9},
    "training": {"steps": 400, "seed": 0},
    "diagnostics": {"eval_every": 100},
}

_NO_REG: Config = {"name": "none", "weight": 0.0}


def _sec(weight: float = 0.5) -> Config:
    return {"name": "sec", "weight": weight}


def _l2(weight: float) -> Config:
    return {"name": "l2", "weight": weight}


def _sec_ablation() -> Preset:
    weights = (0.1, 0.01, 0.005, 0.001)
    runs = [
        ("no regulariser (η=0)", _merge(_METRIC_BASE, regularizer=_NO_REG)),
        ("SEC η=0.5 (μ = batch mean)", _merge(_METRIC_BASE, regularizer=_sec(0.5))),
    ]
    runs += [
        (f"L2 to zero η={w} (μ = 0)", _merge(_METRIC_BASE, regularizer=_l2(w))) for w in weights
    ]
    return Preset(
        "sec_ablation",
        "SEC ablation: no regulariser vs SEC vs L2 towards zero",
        "Semihard triplet on digits: η = 0, SEC with η = 0.5, and the μ = 0 ablation "
        "(L2 towards zero) at η ∈ {0.1, 0.01, 0.005, 0.001} — the SEC rebuttal's table.",
        [c for _, c in runs],
        [n for n, _ in runs],
    )


def _polytope_heads() -> Preset:
    base = {
        "data": {
            "name": "digits",
            "split": "standard",
            "batch_size": 128,
            "samples_per_class": 0,
            "options": {"as_image": True},
        },
        "model": {"name": "lenetpp"},
        "objective": {"kind": "head"},
        "optimizer": {"name": "adam", "lr": 5e-4},
        "training": {"steps": 600, "seed": 0},
        "diagnostics": {"eval_every": 150},
    }
    # The embedding dimension is the polytope's own: K − 1, ⌈K/2⌉, ⌈log2 K⌉ for K = 10.
    heads = (("simplex", 9), ("orthoplex", 5), ("cube", 4))
    runs = [
        (
            f"fixed {kind} head, m = φ (auto)",
            _merge(
                base,
                model={"embedding_dim": dim},
                objective={"name": kind, "options": {"margin": "auto"}},
            ),
        )
        for kind, dim in heads
    ]
    runs.append(
        (
            "learnable linear head (d = 9)",
            _merge(base, model={"embedding_dim": 9}, objective={"name": "linear"}),
        )
    )
    return Preset(
        "polytope_heads",
        "Fixed simplex / orthoplex / cube heads with the automatic margin",
        "RePoNets on LeNet++ (digits as 8×8 images): fixed polytope classifiers with the "
        "ArcFace margin m = φ of each polytope, against a learnable linear head. The "
        "Geometry page draws the vertices over the features.",
        [c for _, c in runs],
        [n for n, _ in runs],
    )


def _polytope_mnist() -> Preset:
    config = {
        "data": {
            "name": "mnist",
            "root": "../shared/data",
            "split": "standard",
            "batch_size": 512,
            "samples_per_class": 0,
        },
        "model": {"name": "lenetpp", "embedding_dim": 9},
        "objective": {
            "kind": "head",
            "name": "simplex",
            "options": {"scale": 30.0, "margin": "auto"},
        },
        "optimizer": {"name": "adam", "lr": 5e-4},
        "training": {"steps": 2000},
        "diagnostics": {"eval_every": 500},
    }
    return Preset(
        "polytope_mnist",
        "RePoNets paper setup: LeNet++ + fixed simplex on MNIST",
        "Adam lr 5e-4, batch 512, κ = 30, m = φ. Needs the MNIST files under data.root "
        "(MNIST/raw/...).",
        [config],
        ["MNIST fixed simplex, m = φ"],
    )


def _normalisation_layers() -> Preset:
    variants = (
        ("plain", {}, _NO_REG),
        ("plain + SEC", {}, _sec()),
        ("BatchNorm on embedding", {"embedding_bn": True}, _NO_REG),
        ("BatchNorm + SEC", {"embedding_bn": True}, _sec()),
        ("weight norm on last layer", {"weight_norm": True}, _NO_REG),
        ("weight norm + SEC", {"weight_norm": True}, _sec()),
    )
    runs = [
        (name, _merge(_METRIC_BASE, model=model, regularizer=reg)) for name, model, reg in variants
    ]
    return Preset(
        "bn_wn_sec",
        "BatchNorm or weight norm on the embedding, with and without SEC",
        "Does normalising the embedding layer reduce the norm variance? (The SEC rebuttal: "
        "BN and WN do not; WN + SEC does.)",
        [c for _, c in runs],
        [n for n, _ in runs],
    )


def _sgd_vs_adam() -> Preset:
    optimisers = (
        ("SGD", {"name": "sgd", "lr": 0.05, "momentum": 0.9}),
        ("Adam", {"name": "adam", "lr": 1e-3}),
    )
    runs = [
        (
            f"{label}{' + SEC' if reg['name'] == 'sec' else ''}",
            _merge(_METRIC_BASE, optimizer=opt, regularizer=reg),
        )
        for label, opt in optimisers
        for reg in (_NO_REG, _sec())
    ]
    return Preset(
        "sgd_vs_adam",
        "The same run with SGD and with Adam (with and without SEC)",
        "Does Adam's per-parameter step already cancel the 1/‖f‖ effect that SGD suffers? "
        "Compare grad/norm_inv_corr, the direction-update ratio and R@1.",
        [c for _, c in runs],
        [n for n, _ in runs],
    )


def _smoke() -> Preset:
    config = _merge(
        _METRIC_BASE,
        model={"embedding_dim": 16},
        regularizer=_sec(),
        training={"steps": 60},
        diagnostics={"eval_every": 30},
    )
    return Preset(
        "smoke",
        "Quick check: one short SEC run on digits",
        "60 steps of semihard triplet + SEC; finishes in seconds on a CPU.",
        [config],
        ["quick SEC run"],
    )


#: The research-scale experiments (a GPU and the dataset's extracted folder) and the
#: data folder each preset suggests; the form checks the real one as it is typed.
RESEARCH_ROOTS = {
    "sec-cub200": "data/CUB_200_2011",
    "sec-cars196": "data/cars196",
    "sec-sop": "data/Stanford_Online_Products",
    "sec-inshop": "data/inshop",
    "sec-simclr-cifar10": "data/cifar10",
}


def _research(name: str, root: str) -> Preset:
    """A declared research-scale experiment as a preset: its variants at full length."""
    from sphere_engine.experiments import EXPERIMENTS

    experiment = EXPERIMENTS[name]
    seed = experiment.seeds[0]
    return Preset(
        name,
        f"{experiment.title} — {experiment.requirements}",
        f"{experiment.description} {experiment.notes}",
        [experiment.config(v, seed, experiment.steps, root) for v in experiment.variants],
        [v.name for v in experiment.variants],
    )


PRESETS: dict[str, Preset] = {
    preset.key: preset
    for preset in (
        _sec_ablation(),
        _polytope_heads(),
        _normalisation_layers(),
        _sgd_vs_adam(),
        _polytope_mnist(),
        _smoke(),
        *(_research(name, root) for name, root in RESEARCH_ROOTS.items()),
    )
}
