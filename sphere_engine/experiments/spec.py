"""The shape of a declared reproduction experiment (pure data, no torch).

An ``Experiment`` is a base run config (a plain dict, as ``RunConfig.from_dict`` takes
it), a list of ``Variant``s that each override part of it, the seeds and steps to run,
the metrics to tabulate, the paper's reference values and the ``Claim``s whose
direction the report checks. Everything here is importable by the dashboard.

Metric keys name where a value comes from in the run store:
- ``"recall@1"`` (no prefix): the run's last evaluation value (``db.queries.final_metrics``);
- ``"train_mean:norm/var"``: the mean of a per-step training scalar over the last
  ``TRAIN_MEAN_FRACTION`` of the steps (the papers' "mean norm variance of the training
  batches");
- ``"train_median:grad/norm_inv_corr"``: the median of a per-step training scalar over
  the whole run (for mechanism statistics that are undefined or zero once a loss stops
  producing gradients, and ratios with heavy tails); ``"train_run_mean:"``: the mean
  over the whole run.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Literal

TRAIN_MEAN_PREFIX = "train_mean:"
#: Training scalars are averaged over the last quarter of the run (after the transient).
TRAIN_MEAN_FRACTION = 0.25
TRAIN_MEDIAN_PREFIX = "train_median:"
TRAIN_RUN_MEAN_PREFIX = "train_run_mean:"
#: prefix -> (fraction of the run's last steps, aggregate) of the training statistics
TRAINING_STATISTICS: dict[str, tuple[float, str]] = {
    TRAIN_MEAN_PREFIX: (TRAIN_MEAN_FRACTION, "mean"),
    TRAIN_MEDIAN_PREFIX: (1.0, "median"),
    TRAIN_RUN_MEAN_PREFIX: (1.0, "mean"),
}


@dataclass(frozen=True)
class Metric:
    """One column of an experiment's table."""

    key: str
    label: str
    percent: bool = False  # shown ×100 (accuracies, NMI, ...), like the papers


@dataclass(frozen=True)
class Variant:
    """One arm of an experiment: a label and the config sections it overrides."""

    name: str
    overrides: dict[str, Any] = field(default_factory=dict)
    #: metric key -> the paper's value, in the metric's display unit (% for percent metrics)
    reference: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Comparison:
    """``metric`` of variant ``left`` stands in ``relation`` to that of variant ``right``
    (or to the number ``right``).

    ``relation``: ``">"``/``"<"`` on the seed means; ``"≈"``: |left − right| ≤ tolerance;
    ``"≥"``: left ≥ right − tolerance ("no worse than"); tolerances are in the metric's
    display unit (points for percent metrics).
    ``distance_to``: compare |mean − distance_to| instead of the mean (e.g. a ratio's
    distance from 1, "balanced").
    """

    metric: str
    left: str
    right: str | float
    relation: Literal[">", "<", "≈", "≥"] = ">"
    tolerance: float = 0.0
    distance_to: float | None = None


@dataclass(frozen=True)
class Claim:
    """A direction the paper (or a reviewer's hypothesis) predicts; holds when every
    comparison holds. ``source`` says who claims it."""

    text: str
    comparisons: tuple[Comparison, ...]
    source: str = "paper"


#: Evaluations of a declared run (its last at the final step): enough for a curve.
EVALUATIONS = 6


@dataclass(frozen=True)
class Experiment:
    name: str
    title: str
    description: str
    base: dict[str, Any]
    variants: tuple[Variant, ...]
    metrics: tuple[Metric, ...]
    claims: tuple[Claim, ...] = ()
    seeds: tuple[int, ...] = (0, 1, 2)
    steps: int = 600
    needs_data_root: bool = False  # MNIST etc. from --data-root
    needs_gpu: bool = False  # research-scale: a GPU run (hours on a CPU)
    analyses: tuple[str, ...] = ()  # extra report sections: "loss_pairs", "polytope"
    #: (baseline, treatment) variant pairs compared seed by seed ("loss_pairs")
    pairs: tuple[tuple[str, str], ...] = ()
    notes: str = ""
    #: the dataset (``data.name``) the variants' ``reference`` values were measured on
    paper_dataset: str = ""

    @property
    def requirements(self) -> str:
        """What running it needs beyond this machine ("" when nothing)."""
        needs = [
            w for w, n in (("a data root", self.needs_data_root), ("a GPU", self.needs_gpu)) if n
        ]
        return f"needs {' and '.join(needs)}" if needs else ""

    def metric_sources(self) -> tuple[list[str], list[tuple[str, str, float, str]]]:
        """What the tables need: evaluation metric names, and per training statistic
        (column key, scalar name, fraction of the last steps, aggregate)."""
        evals, statistics = [], []
        for metric in self.metrics:
            prefix = next((p for p in TRAINING_STATISTICS if metric.key.startswith(p)), None)
            if prefix is None:
                evals.append(metric.key)
                continue
            fraction, aggregate = TRAINING_STATISTICS[prefix]
            statistics.append((metric.key, metric.key[len(prefix) :], fraction, aggregate))
        return evals, statistics

    def variant(self, name: str) -> Variant:
        for variant in self.variants:
            if variant.name == name:
                return variant
        raise ValueError(f"experiment {self.name!r}: no variant {name!r}")

    def config(
        self, variant: Variant, seed: int, steps: int, data_root: str | None = None
    ) -> dict[str, Any]:
        """The full config dict of one run (base ⊕ variant overrides ⊕ seed/steps)."""
        config = merge(self.base, variant.overrides)
        config.setdefault("training", {}).update({"steps": steps, "seed": seed})
        # The report reads the last evaluation (the final step is always evaluated);
        # the ones before it draw the R@1 curve. eval_every is placement
        # (experiments.matching): runs stored with one evaluation still match.
        config.setdefault("diagnostics", {})["eval_every"] = max(1, steps // EVALUATIONS)
        if self.needs_data_root:
            if not data_root:
                raise ValueError(f"data_root: experiment {self.name!r} needs --data-root")
            config.setdefault("data", {})["root"] = data_root
        return config


def merge(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """Deep copy of ``base`` with ``overrides`` merged in (nested dicts merge, others replace)."""
    result = copy.deepcopy(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = merge(result[key], value)
        else:
            result[key] = copy.deepcopy(value)
    return result
