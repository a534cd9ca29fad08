"""The run configuration: the typed ``RunConfig``, its field helpers and option checks.

Plain declarations: nothing here imports torch, the registries or any other part of
``sphere_engine`` but ``catalogue``. The checks that need the components live one layer
up, in ``sphere_engine.validation``."""

from sphere_engine.config.config_error import ConfigError
from sphere_engine.config.data_section import DataConfig
from sphere_engine.config.evaluation import EvaluationConfig, RobustnessConfig
from sphere_engine.config.fields import coerce_value
from sphere_engine.config.model_section import ModelConfig
from sphere_engine.config.overrides import apply_overrides, parse_override, set_path
from sphere_engine.config.run_config import (
    SECTIONS,
    DiagnosticsConfig,
    ObjectiveConfig,
    OptimizerConfig,
    RegularizerConfig,
    RunConfig,
    ScheduleConfig,
    TrainingConfig,
    field_help,
)

__all__ = [
    "SECTIONS",
    "ConfigError",
    "DataConfig",
    "DiagnosticsConfig",
    "EvaluationConfig",
    "ModelConfig",
    "ObjectiveConfig",
    "OptimizerConfig",
    "RegularizerConfig",
    "RobustnessConfig",
    "RunConfig",
    "ScheduleConfig",
    "TrainingConfig",
    "apply_overrides",
    "coerce_value",
    "field_help",
    "parse_override",
    "set_path",
]
