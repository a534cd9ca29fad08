"""A study file: what is compared (arms), how each arm is searched and with what
budget, how trials are validated (folds, metric) and how the winners are reproduced.

``load_spec(path)`` / ``parse_spec(table)`` return a ``StudySpec`` or raise a one-line
``ConfigError`` naming the field (``arms.triplet.space.optimizer.lr.low: ...``); nothing
is queued before ``check_spec`` has built every config a study can launch at the ends of
its ranges with ``validated_config``.

    name = "triplet-vs-ms"
    experiment = "study-cpu"        # optional: the declared experiment it answers
    metric = "map@r"                # a validation metric (default MAP@R)
    folds = 4                       # k class-disjoint folds; 1 = one hold-out quarter
    trials = 50                     # budget of trials per arm (the same for every arm)
    reproductions = 5
    sampler = "tpe"                 # tpe | random | grid
    seed = 0
    [pruning]
    median = true                   # a fold below the median of the same fold
    warmup_trials = 3
    warmup_evaluations = 1
    [base]                          # a run config (sections as in a run's TOML)
    ...
    [arms.triplet]
    set = { "objective.name" = "triplet" }
    [arms.triplet.space]
    "objective.options.margin" = { type = "float", low = 0.01, high = 0.5 }
    "optimizer.lr" = { type = "log_float", low = 1e-5, high = 1e-2 }
"""

from __future__ import annotations

import copy
import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sphere_engine.config import ConfigError, RunConfig
from worker.study.space import Dimension, check_dimension_type, parse_dimension, set_path_value

SAMPLERS = ("tpe", "random", "grid")
#: A study with folds = 1 holds out fold 0 of this many (a quarter of the training classes).
HOLDOUT_FOLDS = 4
#: With at least this many folds, Optuna's Wilcoxon pruner compares a trial's folds with
#: the best trial's.
WILCOXON_MIN_FOLDS = 5
#: Validation metrics a trial can be judged on: the retrieval metrics the evaluation
#: computes on the validation classes (leave-one-out), Recall@K for the run's Ks.
RETRIEVAL_METRICS = ("map@r", "precision@1", "r_precision")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")

TOP_KEYS = {
    "name", "experiment", "metric", "folds", "trials", "reproductions", "sampler", "seed",
    "pruning", "base", "arms",
}  # fmt: skip
ARM_KEYS = {"set", "space", "trials"}
PRUNING_KEYS = {"median", "warmup_trials", "warmup_evaluations", "wilcoxon_p"}


@dataclass(frozen=True)
class Pruning:
    median: bool = True
    warmup_trials: int = 3  # completed trials before the median pruner acts
    warmup_evaluations: int = 1  # evaluations of a fold before it can be pruned
    wilcoxon_p: float = 0.1


@dataclass(frozen=True)
class ArmSpec:
    name: str
    overrides: dict[str, Any]  # config path → value
    space: tuple[Dimension, ...]

    def config(self, base: Mapping[str, Any], params: Mapping[str, Any] = {}) -> dict[str, Any]:
        """The arm's run config with ``params`` (path → value) set (a new dict)."""
        config = copy.deepcopy(dict(base))
        for path, value in {**self.overrides, **params}.items():
            set_path_value(config, path, value)
        return config


@dataclass(frozen=True)
class StudySpec:
    name: str
    base: dict[str, Any]
    arms: tuple[ArmSpec, ...]
    trials: int
    folds: int = 4
    metric: str = "map@r"
    reproductions: int = 5
    sampler: str = "tpe"
    seed: int = 0
    experiment: str | None = None
    pruning: Pruning = field(default_factory=Pruning)

    @property
    def run_folds(self) -> int:
        """``data.folds`` of a trial's runs (a study with one fold holds out a quarter)."""
        return HOLDOUT_FOLDS if self.folds == 1 else self.folds

    def arm(self, name: str) -> ArmSpec:
        for arm in self.arms:
            if arm.name == name:
                return arm
        raise ValueError(
            f"arm {name!r}: not in this study ({', '.join(a.name for a in self.arms)})"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "experiment": self.experiment, "metric": self.metric,
            "folds": self.folds, "trials": self.trials, "reproductions": self.reproductions,
            "sampler": self.sampler, "seed": self.seed,
            "pruning": {
                "median": self.pruning.median, "warmup_trials": self.pruning.warmup_trials,
                "warmup_evaluations": self.pruning.warmup_evaluations,
                "wilcoxon_p": self.pruning.wilcoxon_p,
            },
            "base": self.base,
            "arms": {
                arm.name: {"set": arm.overrides, "space": {d.path: d.to_dict() for d in arm.space}}
                for arm in self.arms
            },
        }  # fmt: skip


def _integer(table: Mapping[str, Any], key: str, default: int, low: int, where: str = "") -> int:
    value = table.get(key, default)
    name = f"{where}{key}"
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(name, f"{value!r} is not an integer")
    if value < low:
        raise ConfigError(name, f"{value} is below the minimum {low}")
    return value


def _unknown(table: Mapping[str, Any], allowed: set[str], where: str) -> None:
    for key in table:
        if key not in allowed:
            raise ConfigError(
                f"{where}{key}", f"unknown key; allowed: {', '.join(sorted(allowed))}"
            )


def parse_spec(table: Mapping[str, Any]) -> StudySpec:
    """The study a TOML table declares (its shape and values; ``check_spec`` then builds
    its configs)."""
    if not isinstance(table, Mapping):
        raise ConfigError("study", f"expected a table, got {table!r}")
    _unknown(table, TOP_KEYS, "")
    name = table.get("name")
    if not isinstance(name, str) or not NAME.match(name):
        raise ConfigError("name", f"{name!r}: expected a name of letters, digits, '.', '_' or '-'")
    experiment = table.get("experiment")
    if experiment is not None and not isinstance(experiment, str):
        raise ConfigError("experiment", f"{experiment!r} is not a name")
    metric = table.get("metric", "map@r")
    if not isinstance(metric, str):
        raise ConfigError("metric", f"{metric!r} is not a metric name")
    sampler = table.get("sampler", "tpe")
    if sampler not in SAMPLERS:
        raise ConfigError("sampler", f"{sampler!r} is not one of {', '.join(SAMPLERS)}")
    folds = _integer(table, "folds", 4, 1)
    reproductions = _integer(table, "reproductions", 5, 1)
    seed = _integer(table, "seed", 0, 0)
    pruning_table = table.get("pruning", {})
    if not isinstance(pruning_table, Mapping):
        raise ConfigError("pruning", "expected a table")
    _unknown(pruning_table, PRUNING_KEYS, "pruning.")
    median = pruning_table.get("median", True)
    if not isinstance(median, bool):
        raise ConfigError("pruning.median", f"{median!r} is not true or false")
    wilcoxon_p = pruning_table.get("wilcoxon_p", 0.1)
    if (
        isinstance(wilcoxon_p, bool)
        or not isinstance(wilcoxon_p, (int, float))
        or not 0 < wilcoxon_p < 1
    ):
        raise ConfigError("pruning.wilcoxon_p", f"{wilcoxon_p!r} is not a number in (0, 1)")
    pruning = Pruning(
        median,
        _integer(pruning_table, "warmup_trials", 3, 0, "pruning."),
        _integer(pruning_table, "warmup_evaluations", 1, 0, "pruning."),
        float(wilcoxon_p),
    )
    base = table.get("base", {})
    if not isinstance(base, Mapping):
        raise ConfigError("base", "expected a table (a run config)")
    arms_table = table.get("arms")
    if not isinstance(arms_table, Mapping) or not arms_table:
        raise ConfigError("arms", "a study compares at least one arm ([arms.NAME])")
    budgets = {}
    arms = []
    for arm_name, arm_table in arms_table.items():
        where = f"arms.{arm_name}"
        if not NAME.match(arm_name):
            raise ConfigError(where, "an arm's name is letters, digits, '.', '_' or '-'")
        if not isinstance(arm_table, Mapping):
            raise ConfigError(where, "expected a table with set and space")
        _unknown(arm_table, ARM_KEYS, f"{where}.")
        overrides = arm_table.get("set", {})
        space = arm_table.get("space", {})
        for key, value in (("set", overrides), ("space", space)):
            if not isinstance(value, Mapping):
                raise ConfigError(f"{where}.{key}", "expected a table of config paths")
        if "trials" in arm_table:
            budgets[arm_name] = _integer(arm_table, "trials", 0, 0, f"{where}.")
        dimensions = tuple(
            parse_dimension(path, dim, f"{where}.space.{path}") for path, dim in space.items()
        )
        for path in overrides:
            if path in space:
                raise ConfigError(f"{where}.set.{path}", "is also searched in space; keep one")
        arms.append(ArmSpec(arm_name, dict(overrides), dimensions))
    trials = _budget(table, budgets)
    return StudySpec(
        name, copy.deepcopy(dict(base)), tuple(arms), trials, folds, metric, reproductions,
        sampler, seed, experiment, pruning,
    )  # fmt: skip


def _budget(table: Mapping[str, Any], per_arm: dict[str, int]) -> int:
    """The one budget: ``trials`` at the top, or the same ``trials`` in every arm."""
    if "trials" in table:
        trials = _integer(table, "trials", 0, 0)
        for arm, value in per_arm.items():
            if value != trials:
                raise ConfigError(
                    f"arms.{arm}.trials",
                    f"{value} differs from trials = {trials}: every arm gets the same budget",
                )
    elif per_arm:
        values = sorted(set(per_arm.values()))
        if len(values) > 1:
            arm = next(a for a, v in per_arm.items() if v != next(iter(per_arm.values())))
            raise ConfigError(
                f"arms.{arm}.trials",
                f"unequal budgets {per_arm}: every arm gets the same number of trials",
            )
        trials = values[0]
    else:
        raise ConfigError("trials", "missing: the budget of trials per arm")
    if trials < 1:
        raise ConfigError("trials", f"{trials}: the budget must be at least 1 trial per arm")
    return trials


def load_spec(path: str | Path, overrides: Sequence[str] = ()) -> StudySpec:
    """Parse and check a study file, or a study preset by name (``check_spec``);
    ``overrides`` (``section.key=value``) change its base run config."""
    from sphere_engine.config import apply_overrides
    from sphere_engine.experiments.studies import STUDY_PRESETS, study_preset

    path = Path(path)
    if path.is_file():
        try:
            table = tomllib.loads(path.read_text())
        except tomllib.TOMLDecodeError as error:
            raise ValueError(f"{path}: not valid TOML ({error})") from None
    elif str(path) in STUDY_PRESETS:
        table = study_preset(str(path))
    else:
        raise ValueError(
            f"study file {str(path)!r} does not exist (nor is it a preset: "
            f"{', '.join(STUDY_PRESETS)})"
        )
    if overrides:
        base = table.get("base", {})
        if not isinstance(base, Mapping):
            raise ConfigError("base", "expected a table (a run config)")
        table = {**table, "base": apply_overrides(dict(base), list(overrides))}
    spec = parse_spec(table)
    check_spec(spec)
    return spec


def spec_from_json(text: str) -> StudySpec:
    return parse_spec(json.loads(text))


def check_metric(spec: StudySpec, base: RunConfig) -> None:
    """The objective is a retrieval metric the validation evaluation computes."""
    computed = [*RETRIEVAL_METRICS, *(f"recall@{k}" for k in base.diagnostics.recall_ks)]
    if spec.metric not in computed:
        raise ConfigError(
            "metric",
            f"{spec.metric!r} is not computed by the validation evaluation; "
            f"choose one of {', '.join(computed)}",
        )


def check_spec(spec: StudySpec) -> None:
    """Every config the study can launch, checked before anything is queued: each arm's
    config with every searched path at each end of its range (or each choice) as a
    fold's run; a reproduction's run; the folds against the training classes; the
    metric."""
    from sphere_engine.validation import validated_config
    from worker.study.runs import reproduction_config, trial_config

    try:
        base = RunConfig.from_dict(dict(spec.base))
    except ConfigError as error:
        raise error.under("base") from None
    check_metric(spec, base)
    for arm in spec.arms:
        where = f"arms.{arm.name}"
        for dimension in arm.space:
            check_dimension_type(dimension, f"{where}.space.{dimension.path}")
            if spec.sampler == "grid":
                dimension.grid_values(f"{where}.space.{dimension.path}")
        try:
            arm_config = validated_config(arm.config(spec.base)).to_dict()
        except ConfigError as error:
            set_here = error.path in arm.overrides
            prefix = f"{where}.set." if set_here else "base."
            raise ConfigError(prefix + error.path, error.detail) from None
        _check_folds(spec, arm_config)
        validated_config(reproduction_config(spec, arm_config, repro=0, fold=0))
        for dimension in arm.space:
            for value in dimension.extremes():
                config = arm.config(spec.base, {dimension.path: value})
                try:
                    validated_config(trial_config(spec, config, fold=0))
                except ConfigError as error:
                    raise ConfigError(
                        f"{where}.space.{dimension.path}",
                        f"{value!r} gives an invalid run: {error}",
                    ) from None


def _check_folds(spec: StudySpec, arm_config: dict[str, Any]) -> None:
    """Folds need class-disjoint training and test classes, and no more folds than
    training classes (``validated_config`` of a fold's run knows the class count)."""
    from sphere_engine.validation import validated_config
    from worker.study.runs import trial_config

    split = RunConfig.from_dict(arm_config).data.split
    if split != "class_disjoint":
        raise ConfigError(
            "base.data.split",
            f"{split!r}: a study's folds need 'class_disjoint' training and test classes",
        )
    try:
        validated_config(trial_config(spec, arm_config, fold=0))
    except ConfigError as error:
        if error.path == "data.folds":
            raise ConfigError("folds", error.detail) from None
        raise
