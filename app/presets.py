"""Launch presets: the declared experiments of ``sphere_engine.experiments``, one run per
variant (the experiment's first seed), planned as ``spherescope reproduce`` plans them.

A preset's runs carry the experiment's tags (``repro:NAME``, ``variant:LABEL``), so
they count on the Report page; more seeds: ``spherescope reproduce NAME``. One extra
preset, ``smoke``, is a short check that is no part of any experiment and is untagged.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from typing import Any

from sphere_engine.experiments import EXPERIMENTS, Experiment, PlannedRun, get_experiment, plan

Config = dict[str, Any]
#: Where experiments over local files (MNIST) find them on the development machines.
DATA_ROOT = "../shared/data"
#: The research-scale experiments (a GPU and the dataset's extracted folder) and the
#: data folder each preset suggests; the form checks the real one as it is typed.
RESEARCH_ROOTS = {
    "sec-cub200": "data/CUB_200_2011",
    "sec-cars196": "data/cars196",
    "sec-sop": "data/Stanford_Online_Products",
    "sec-inshop": "data/inshop",
    "sec-simclr-cifar10": "data/cifar10",
}


@dataclass(frozen=True)
class Preset:
    key: str
    title: str
    description: str
    planned: tuple[PlannedRun, ...]

    @property
    def names(self) -> list[str]:
        return [run.name for run in self.planned]

    @property
    def configs(self) -> list[Config]:
        return [run.config for run in self.planned]

    @property
    def tags(self) -> list[tuple[str, ...]]:
        return [run.tags for run in self.planned]

    def runs(self) -> list[tuple[str, Config]]:
        """(run name, deep copy of the config) for every run of the preset."""
        return [(run.name, copy.deepcopy(run.config)) for run in self.planned]


def experiment_preset(experiment: Experiment) -> Preset:
    """One run per variant of ``experiment`` at its first seed, tagged for the report."""
    root = RESEARCH_ROOTS.get(experiment.name, DATA_ROOT) if experiment.needs_data_root else None
    planned = plan(experiment, seeds=experiment.seeds[:1], data_root=root)
    title = experiment.title
    if experiment.requirements:
        title = f"{title} — {experiment.requirements}"
    description = f"{experiment.description} {experiment.notes}".strip()
    return Preset(experiment.name, title, description, tuple(planned))


def smoke_preset() -> Preset:
    """60 steps of the SEC arm of the SEC ablation: seconds on a CPU; untagged, so it
    never mixes into the experiment's report."""
    experiment = get_experiment("sec-ablation")
    (run,) = plan(experiment, seeds=(0,), steps_scale=60 / experiment.steps, variants=["SEC η=0.5"])
    quick = dataclasses.replace(run, name="quick SEC run", tags=())
    return Preset(
        "smoke",
        "Quick check: one short SEC run on digits",
        "60 steps of semihard triplet + SEC; finishes in seconds on a CPU.",
        (quick,),
    )


PRESETS: dict[str, Preset] = {
    preset.key: preset
    for preset in (*(experiment_preset(e) for e in EXPERIMENTS.values()), smoke_preset())
}
