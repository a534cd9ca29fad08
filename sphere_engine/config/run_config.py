"""The one typed run configuration shared by the UI, the worker, the CLI and the engine.

``RunConfig`` has one section per concern. Every field carries its help text (shown
in the dashboard's launch form) and, where it has one, its allowed range or choices.

``RunConfig.from_dict`` checks the schema and the cross-field rules that need nothing
else: unknown keys, wrong types, out-of-range values and incompatible settings fail
with a ``ConfigError`` that names the field, the bad value and what is allowed. It is
cheap and pure: it never imports torch or the component registries, never reads
``data.root`` and never changes its input. ``sphere_engine.validation.validate`` adds
the checks that ask the registries and the dataset; every launch runs both.

Fields that hold a registry name carry ``registry=<kind>`` in their metadata instead
of a hard-coded list of names; ``sphere_engine.validation.name_choices`` lists them.
"""

from __future__ import annotations

import dataclasses
import json
import tomllib
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from sphere_engine.catalogue.facts import DEFAULT_RECALL_KS, OptimizerName
from sphere_engine.catalogue.retention import policy_problem as retention_policy_problem
from sphere_engine.config.config_error import ConfigError
from sphere_engine.config.crop_scale import check_crop_scale
from sphere_engine.config.data_section import DataConfig
from sphere_engine.config.devices import check_device_split
from sphere_engine.config.evaluation import (
    EvaluationConfig,
    RobustnessConfig,
    check_evaluation_combinations,
    check_list,
)
from sphere_engine.config.fields import check_range, coerce_value, option
from sphere_engine.config.folds import check_folds_and_early_stop
from sphere_engine.config.model_section import ModelConfig
from sphere_engine.config.overrides import apply_overrides


def _section_from_dict(cls: type, data: Any, section: str) -> Any:
    if not isinstance(data, dict):
        raise ConfigError(section, f"expected a table of settings, got {data!r}")
    hints = typing.get_type_hints(cls)
    known = {f.name: f for f in dataclasses.fields(cls)}
    for key in data:
        if key not in known:
            raise ConfigError(
                f"{section}.{key}", f"unknown setting; allowed: {', '.join(sorted(known))}"
            )
    values = {}
    for name, fld in known.items():
        if name not in data:
            continue
        value = coerce_value(data[name], hints[name], f"{section}.{name}")
        check_range(value, dict(fld.metadata), f"{section}.{name}")
        values[name] = value
    return cls(**values)


# ----------------------------------------------------------------------------- sections


@dataclass
class ObjectiveConfig:
    kind: Literal["loss", "head"] = option(
        "loss",
        "loss: a pair loss on normalised embeddings; head: a classifier head + softmax",
        label="Objective kind",
    )
    name: str = option(
        "triplet",
        "Loss or head (a registered name of the chosen kind)",
        registry="objective",
        label="Loss or head",
    )
    options: dict[str, Any] = option(
        {}, "Options of the loss or head (margin, scale, ...)", label="Objective options"
    )


@dataclass
class RegularizerConfig:
    name: str = option(
        "none",
        "Norm regulariser (a registered name, or none)",
        registry="regularizer",
        label="Regulariser",
    )
    weight: float = option(0.0, "Weight η of the regulariser term", min=0.0, label="Weight η")
    options: dict[str, Any] = option(
        {}, "Options of the chosen regulariser (see its list)", label="Regulariser options"
    )


@dataclass
class OptimizerConfig:
    name: OptimizerName = option("adam", "Optimiser", label="Optimiser")
    lr: float = option(1e-3, "Learning rate of the backbone", min=0.0, label="Learning rate")
    head_lr: float | None = option(
        None,
        "Learning rate of the embedding layer and the head / loss parameters (default: same as lr)",
        min=0.0,
        label="Head learning rate",
    )
    momentum: float = option(0.9, "Momentum of SGD and RMSprop", min=0.0, max=1.0, label="Momentum")
    nesterov: bool = option(False, "SGD Nesterov momentum", label="Nesterov momentum")
    weight_decay: float = option(0.0, "Weight decay", min=0.0, label="Weight decay")


@dataclass
class ScheduleConfig:
    name: Literal["constant", "step", "cosine"] = option(
        "constant", "Learning-rate schedule", label="Schedule"
    )
    milestones: list[int] = option(
        [], "step: iterations at which lr is multiplied by gamma", label="Milestones (steps)"
    )
    gamma: float = option(0.1, "step: decay factor", min=0.0, max=1.0, label="Decay factor γ")
    warmup_steps: int = option(0, "Linear warm-up iterations", min=0, label="Warm-up steps")
    min_lr_ratio: float = option(
        0.0, "cosine: final lr as a fraction of lr", min=0.0, max=1.0, label="Final lr ratio"
    )


@dataclass
class TrainingConfig:
    steps: int = option(300, "Training iterations", min=1, max=10_000_000, label="Training steps")
    seed: int = option(0, "Random seed (data order, initialisation)", min=0, label="Seed")
    device: Literal["auto", "cpu", "cuda"] = option(
        "auto", "auto uses CUDA when present", label="Device"
    )
    devices: int = option(
        1,
        "Data-parallel processes (one per GPU; on CPU, gloo processes) that share each "
        "batch: every process trains on its slice of the configured global batch",
        min=1,
        max=1024,
        label="Devices",
    )
    checkpoint_every: int = option(
        0,
        "Save a checkpoint every N steps (0 = only at the end)",
        min=0,
        label="Checkpoint every (steps)",
    )
    checkpoint_dir: str = option(
        "", "Where checkpoints go (empty: none are written)", label="Checkpoint folder"
    )
    keep_checkpoints: str = option(
        "last+best",
        "Checkpoints kept as the run goes: last, best (by the run's main metric), "
        "last+best, all, or N (the last N)",
        label="Keep checkpoints",
    )
    amp: Literal["off", "bf16", "fp16"] = option(
        "off",
        "Mixed precision of the forward pass: bf16, or fp16 with a gradient scaler (CUDA "
        "only); the diagnostics stay float32",
        label="Mixed precision",
    )
    channels_last: bool = option(
        False, "channels_last memory format for image backbones", label="channels_last"
    )
    compile: bool = option(False, "torch.compile the backbone", label="torch.compile")
    early_stop_patience: int = option(
        0,
        "Stop after this many evaluations in a row without improving on the best value of "
        "early_stop_metric (0 = never stop early); with data.folds, on the validation classes",
        min=0,
        max=100_000,
        label="Early-stop patience (evaluations)",
    )
    early_stop_metric: str = option(
        "map@r",
        "Evaluation metric early stopping watches (and, with data.folds, the one that picks "
        "the weights evaluation.final_test evaluates)",
        label="Early-stop metric",
    )


@dataclass
class DiagnosticsConfig:
    log_every: int = option(
        1,
        "Log the per-iteration geometry statistics every N steps",
        min=1,
        label="Log every (steps)",
    )
    eval_every: int = option(
        100,
        "Evaluate every N steps (and at the end): on the validation classes with "
        "data.folds, else on the test split",
        min=1,
        label="Evaluate every (steps)",
    )
    tracked_samples: int = option(
        16, "Training samples whose norms are followed", min=0, max=1024, label="Tracked samples"
    )
    tracked_every: int = option(
        10,
        "Embed the tracked samples on the logged steps that are multiples of N (and the "
        "first and last logged steps): their pass of their own costs about a training "
        "forward on small images, so every step would slow the run by a quarter",
        min=1,
        label="Track samples every (steps)",
    )
    snapshot_size: int = option(
        2000, "Test embeddings kept per evaluation snapshot", min=0, max=2000, label="Snapshot size"
    )
    eval_max_samples: int = option(
        10000, "Test samples used per evaluation (0 = all)", min=0, label="Evaluation samples"
    )
    gradient_stats: bool = option(
        True, "Gradient diagnostics on the embedding", label="Gradient statistics"
    )
    cuda_graphs: bool = option(
        True,
        "On a GPU, replay the diagnostics and the tracked samples' pass as CUDA graphs "
        "(one launch instead of hundreds; one process per run, an uncompiled model)",
        label="CUDA graphs for diagnostics",
    )
    recall_ks: list[int] = option(
        list(DEFAULT_RECALL_KS),
        "K values of Recall@K at evaluation (In-shop: 1, 10, 20, 30)",
        label="Recall@K values",
    )


SECTIONS: dict[str, type] = {
    "data": DataConfig,
    "model": ModelConfig,
    "objective": ObjectiveConfig,
    "regularizer": RegularizerConfig,
    "optimizer": OptimizerConfig,
    "schedule": ScheduleConfig,
    "training": TrainingConfig,
    "diagnostics": DiagnosticsConfig,
    "evaluation": EvaluationConfig,
    "robustness": RobustnessConfig,
}


@dataclass
class RunConfig:
    """Everything that defines a training run. Build with ``from_dict``/``from_toml``."""

    data: DataConfig = field(default_factory=DataConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    objective: ObjectiveConfig = field(default_factory=ObjectiveConfig)
    regularizer: RegularizerConfig = field(default_factory=RegularizerConfig)
    optimizer: OptimizerConfig = field(default_factory=OptimizerConfig)
    schedule: ScheduleConfig = field(default_factory=ScheduleConfig)
    training: TrainingConfig = field(default_factory=TrainingConfig)
    diagnostics: DiagnosticsConfig = field(default_factory=DiagnosticsConfig)
    evaluation: EvaluationConfig = field(default_factory=EvaluationConfig)
    robustness: RobustnessConfig = field(default_factory=RobustnessConfig)

    # -- construction ---------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunConfig:
        """Build and check schema and cross-field rules (no registries, no torch, no
        files; ``data`` is left unchanged). ``sphere_engine.validation`` does the rest."""
        if not isinstance(data, dict):
            raise ValueError(f"run config: expected a table of sections, got {data!r}")
        for key in data:
            if key not in SECTIONS:
                raise ConfigError(key, f"unknown config section; allowed: {', '.join(SECTIONS)}")
        sections = {
            name: _section_from_dict(cls_, data.get(name, {}), name)
            for name, cls_ in SECTIONS.items()
        }
        config = cls(**sections)
        config.check_combinations()
        return config

    @classmethod
    def from_json(cls, text: str) -> RunConfig:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError(f"run config: not valid JSON ({error})") from None
        return cls.from_dict(data)

    @classmethod
    def from_toml(cls, path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> RunConfig:
        path = Path(path)
        if not path.is_file():
            raise ValueError(f"config file {str(path)!r} does not exist")
        try:
            data = tomllib.loads(path.read_text())
        except tomllib.TOMLDecodeError as error:
            raise ValueError(f"{path}: not valid TOML ({error})") from None
        return cls.from_dict(apply_overrides(data, overrides))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    # -- validation -----------------------------------------------------------------
    def check_combinations(self) -> None:
        """Cross-field rules that need no registry (pure, cheap)."""
        data = self.data
        if data.samples_per_class:
            if data.samples_per_class > data.batch_size:
                raise ConfigError(
                    "data.samples_per_class",
                    f"{data.samples_per_class} is larger than data.batch_size {data.batch_size}",
                    related=["data.batch_size"],
                )
            if data.batch_size % data.samples_per_class:
                raise ConfigError(
                    "data.batch_size",
                    f"{data.batch_size} is not a multiple of "
                    f"data.samples_per_class {data.samples_per_class} (P×K batches)",
                    related=["data.samples_per_class"],
                )
        if self.regularizer.name == "none" and self.regularizer.weight > 0:
            raise ConfigError(
                "regularizer.weight",
                f"{self.regularizer.weight} is set but regularizer.name is 'none'; "
                "choose a regulariser or set weight 0",
                related=["regularizer.name"],
            )
        for milestone in self.schedule.milestones:
            if not 0 < milestone <= self.training.steps:
                raise ConfigError(
                    "schedule.milestones",
                    f"{milestone} is outside 1..training.steps ({self.training.steps})",
                    related=["training.steps"],
                )
        if self.schedule.warmup_steps >= self.training.steps:
            raise ConfigError(
                "schedule.warmup_steps",
                f"{self.schedule.warmup_steps} must be below training.steps "
                f"({self.training.steps})",
                related=["training.steps"],
            )
        check_crop_scale(data.crop_scale, "data.crop_scale")
        check_list("diagnostics.recall_ks", self.diagnostics.recall_ks, lambda k: k >= 1, ">= 1")
        policy_problem = retention_policy_problem(self.training.keep_checkpoints)
        if policy_problem is not None:
            raise ConfigError("training.keep_checkpoints", policy_problem)
        check_evaluation_combinations(self.evaluation, self.robustness, self.data)
        check_device_split(self.training.devices, self.data)
        check_folds_and_early_stop(self.data, self.training.early_stop_metric)


def field_help(section: str, name: str) -> dict[str, Any]:
    """Help text and constraints of one field (for forms)."""
    cls = SECTIONS[section]
    for fld in dataclasses.fields(cls):
        if fld.name == name:
            return dict(fld.metadata)
    raise ValueError(f"{section}.{name}: no such setting")
