"""Checks of a run config against the registries and the dataset, before any training.

``RunConfig.from_dict`` checks the schema and the cross-field rules that need nothing
else; ``validate(config)`` adds what needs the components: registry names, option names
and types, what a component's ``traits`` ask of the batch (P×K batches with K ≥ 2 for
pair losses), the dataset's class count (classes per batch, polytope dimensions; this
may read ``data.root``). Losses, heads and regularisers are cheap to build, so they are
built here by ``build_objective_parts`` (the function training builds them with), so their
own option checks fire up front too. Every error is a ``ConfigError`` carrying the
fields it concerns: components raise ``ConfigError`` for the fields they know, and a
component's other ``ValueError`` is reported under the section that chose it (its
message is never read for a field name). ``validate`` changes nothing.
``validated_config`` is the one entry the launch paths, the CLI and the Launch form call.

The registries (and with them torch) are imported inside the functions, not at module
level: the dashboard and the launch path import this module cheaply and pay for torch
only when they validate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sphere_engine.config import ConfigError, RunConfig
from sphere_engine.registry import Registry
from sphere_engine.validation.registries import NONE, registry_for


def _known_name(section: str, name: str, objective_kind: str = "loss") -> Registry[Any]:
    registry = registry_for(section, objective_kind)
    try:
        registry.get(name)  # unknown name → ValueError listing the known ones
    except ValueError as error:
        raise ConfigError(f"{section}.name", str(error)) from None
    return registry


def validated_config(config: RunConfig | Mapping[str, Any]) -> RunConfig:
    """The one check of a run config: a ``RunConfig`` from a dict (schema and
    cross-field rules, ``from_dict``) or as given, then ``validate``. Raises
    ``ConfigError`` naming the fields."""
    if isinstance(config, RunConfig):
        checked = config
    elif isinstance(config, Mapping):
        checked = RunConfig.from_dict(dict(config))
    else:
        raise ConfigError(
            "run config", f"expected a dict or a RunConfig, got {type(config).__name__}"
        )
    validate(checked)
    return checked


def validate(config: RunConfig) -> None:
    """Raise ``ConfigError`` naming the fields for anything the components reject."""
    if not isinstance(config, RunConfig):
        raise ValueError(
            "run config: validate() takes a RunConfig (build it with RunConfig.from_dict), "
            f"got {type(config).__name__}"
        )
    from sphere_engine.data import dataset_info
    from sphere_engine.data.folds import fold_info
    from sphere_engine.heads import polytope_dim
    from sphere_engine.objective_parts import build_objective_parts, typed_options

    data, model, objective, regularizer = (
        config.data,
        config.model,
        config.objective,
        config.regularizer,
    )
    datasets = _known_name("data", data.name)
    models = _known_name("model", model.name)
    objectives = _known_name("objective", objective.name, objective.kind)
    if regularizer.name != NONE:
        _known_name("regularizer", regularizer.name)

    if objectives.traits(objective.name).needs_positives and data.samples_per_class < 2:
        raise ConfigError(
            "data.samples_per_class",
            f"{data.samples_per_class} gives batches without guaranteed positive pairs; "
            f"pair loss {objective.name!r} needs at least 2 samples per class (a P×K batch "
            "with K ≥ 2)",
        )

    from sphere_engine.models.build import check_backbone
    from sphere_engine.validation.image_size import resolved_data_options

    data_options = typed_options(datasets, data.name, resolved_data_options(config))
    try:
        info = dataset_info(
            data.name, root=data.root, split=data.split, download=data.download, **data_options
        )
    except ConfigError:
        raise
    except ValueError as error:  # not about one field the dataset knows
        raise ConfigError("data", str(error)) from None
    info = fold_info(info, data.folds, data.fold)  # a fold trains on fewer classes
    num_classes = info.num_classes_train
    if config.robustness.enabled and not getattr(datasets.get(data.name), "has_pixel_range", True):
        raise ConfigError(
            "robustness.enabled",
            f"dataset {data.name!r} declares no valid input range to attack within; turn "
            "robustness off or use an image dataset",
        )
    if data.samples_per_class:
        classes_per_batch = data.batch_size // data.samples_per_class
        if classes_per_batch > num_classes:
            raise ConfigError(
                "data.batch_size",
                f"{data.batch_size} / samples_per_class {data.samples_per_class} = "
                f"{classes_per_batch} classes per batch, but the {data.split} training split "
                f"of {data.name!r} has only {num_classes} classes",
                related=["data.samples_per_class"],
            )

    typed_options(models, model.name, model.options)
    try:
        check_backbone(model, info.input_shape)
    except ConfigError:
        raise
    except ValueError as error:  # the backbone refuses this input
        raise ConfigError("model.name", str(error), related=["data.name"]) from None

    if objectives.traits(objective.name).is_fixed:  # a polytope head: d must hold it
        needed = polytope_dim(objectives.get(objective.name).kind, num_classes)
        if model.embedding_dim < needed:
            raise ConfigError(
                "model.embedding_dim",
                f"{model.embedding_dim} is too small for a {objective.name} head with "
                f"{num_classes} classes; it needs at least {needed} dimensions",
            )
    build_objective_parts(config, num_classes)  # their own option checks fire here
