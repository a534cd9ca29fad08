"""The paper experiments SphereScope reproduces, declared once as data (no torch).

``spherescope reproduce NAME`` runs one, ``spherescope report`` and the dashboard's
Report page render them from the run store. Add an experiment: a module here with an
``EXPERIMENT`` and one line in ``_MODULES``.
"""

from __future__ import annotations

from sphere_engine.experiments import (
    isotropic,
    reponet,
    sec_ablation,
    sec_benchmarks,
    sec_bn_wn,
    sec_losses,
    sec_optimizers,
    sec_simclr,
    sec_simclr_cifar10,
)
from sphere_engine.experiments.plan import EXPERIMENT_TAG, VARIANT_TAG, PlannedRun, plan
from sphere_engine.experiments.spec import (
    TRAIN_MEAN_FRACTION,
    TRAIN_MEAN_PREFIX,
    TRAIN_MEDIAN_PREFIX,
    Claim,
    Comparison,
    Experiment,
    Metric,
    Variant,
)

_MODULES = (sec_ablation, sec_losses, sec_bn_wn, sec_optimizers, sec_simclr, reponet, isotropic)
EXPERIMENTS: dict[str, Experiment] = {m.EXPERIMENT.name: m.EXPERIMENT for m in _MODULES}
# research-scale settings: the benchmarks in their official layouts, on a GPU
for _experiment in (*sec_benchmarks.EXPERIMENTS, sec_simclr_cifar10.EXPERIMENT):
    EXPERIMENTS[_experiment.name] = _experiment


def get_experiment(name: str) -> Experiment:
    """The declared experiment ``name``; ``ValueError`` listing the known ones otherwise."""
    if name not in EXPERIMENTS:
        raise ValueError(f"experiment: {name!r} is unknown; choose one of {', '.join(EXPERIMENTS)}")
    return EXPERIMENTS[name]


__all__ = [
    "EXPERIMENTS",
    "EXPERIMENT_TAG",
    "TRAIN_MEAN_FRACTION",
    "TRAIN_MEAN_PREFIX",
    "TRAIN_MEDIAN_PREFIX",
    "VARIANT_TAG",
    "Claim",
    "Comparison",
    "Experiment",
    "Metric",
    "PlannedRun",
    "Variant",
    "get_experiment",
    "plan",
]
