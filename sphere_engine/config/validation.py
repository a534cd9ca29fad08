"""Checks of a run config against the registries and the dataset, before any training.

``RunConfig.from_dict`` checks the schema and the cross-field rules that need nothing
else; ``validate(config)`` adds what needs the components: registry names, option names
and types, what a component's ``traits`` ask of the batch (P×K batches with K ≥ 2 for
pair losses), the dataset's class count (classes per batch, polytope dimensions; this
may read ``data.root``). Losses, heads and regularisers are cheap to build, so they are
built once here and their own option checks fire up front too. Every error is a
``ValueError`` that names the field; ``validate`` changes nothing.

The registries (and with them torch) are imported inside the functions, not at module
level: the dashboard and the launch path import this module cheaply and pay for torch
only when they validate.
"""

from __future__ import annotations

from typing import Any

from sphere_engine.config import RunConfig, coerce_value
from sphere_engine.registry import Registry


def registry_for(section: str, objective_kind: str = "loss") -> Registry[Any]:
    """The registry a config section's ``name`` is looked up in (``objective`` by kind)."""
    from sphere_engine.data import DATASETS
    from sphere_engine.heads import HEADS
    from sphere_engine.losses import LOSSES
    from sphere_engine.models import MODELS
    from sphere_engine.regularizers import REGULARIZERS

    registries: dict[str, Registry[Any]] = {
        "data": DATASETS,
        "model": MODELS,
        "objective": HEADS if objective_kind == "head" else LOSSES,
        "regularizer": REGULARIZERS,
    }
    if section not in registries:
        raise ValueError(f"{section}: has no registry; choose one of {', '.join(registries)}")
    return registries[section]


def name_choices(section: str, objective_kind: str = "loss") -> list[str]:
    """The names ``<section>.name`` accepts, from the registry (``none`` first for the
    regulariser). Help texts and dropdowns use this instead of a hard-coded list."""
    names = registry_for(section, objective_kind).names()
    return ["none", *names] if section == "regularizer" else names


def _named(field: str, error: ValueError) -> ValueError:
    message = str(error)
    return ValueError(message if message.startswith(field) else f"{field}: {message}")


def _known_name(section: str, name: str, objective_kind: str = "loss") -> Registry[Any]:
    registry = registry_for(section, objective_kind)
    try:
        registry.get(name)  # unknown name → ValueError listing the known ones
    except ValueError as error:
        raise _named(f"{section}.name", error) from None
    return registry


def _typed_options(registry: Registry[Any], name: str, options: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``options`` with names and types checked (ints widened to floats)."""
    registry.check_kwargs(name, options)
    params = registry.params(name)
    field = registry.options_field
    return {
        key: coerce_value(value, params[key].annotation, f"{field}.{key}")
        for key, value in options.items()
    }


def validate(config: RunConfig) -> None:
    """Raise ``ValueError`` naming the field for anything the components reject."""
    if not isinstance(config, RunConfig):
        raise ValueError(
            "run config: validate() takes a RunConfig (build it with RunConfig.from_dict), "
            f"got {type(config).__name__}"
        )
    from sphere_engine.data import dataset_info
    from sphere_engine.heads import create_head, polytope_dim
    from sphere_engine.losses import create_loss
    from sphere_engine.regularizers import create_regularizer

    data, model, objective, regularizer = (
        config.data,
        config.model,
        config.objective,
        config.regularizer,
    )
    datasets = _known_name("data", data.name)
    models = _known_name("model", model.name)
    objectives = _known_name("objective", objective.name, objective.kind)
    regularizers = None
    if regularizer.name != "none":
        regularizers = _known_name("regularizer", regularizer.name)

    if objectives.traits(objective.name).needs_positives and data.samples_per_class < 2:
        raise ValueError(
            f"data.samples_per_class: {data.samples_per_class} gives batches without "
            f"guaranteed positive pairs; pair loss {objective.name!r} needs at least 2 "
            "samples per class (a P×K batch with K ≥ 2)"
        )

    from sphere_engine.config.image_size import resolved_data_options
    from sphere_engine.models.build import check_backbone

    data_options = _typed_options(datasets, data.name, resolved_data_options(config))
    try:
        info = dataset_info(
            data.name, root=data.root, split=data.split, download=data.download, **data_options
        )
    except ValueError as error:
        raise _named("data", error) from None
    num_classes = info.num_classes_train
    if config.robustness.enabled and not getattr(datasets.get(data.name), "has_pixel_range", True):
        raise ValueError(
            f"robustness.enabled: dataset {data.name!r} declares no valid input range to "
            "attack within; turn robustness off or use an image dataset"
        )
    if data.samples_per_class:
        classes_per_batch = data.batch_size // data.samples_per_class
        if classes_per_batch > num_classes:
            raise ValueError(
                f"data.batch_size: {data.batch_size} / samples_per_class "
                f"{data.samples_per_class} = {classes_per_batch} classes per batch, but the "
                f"{data.split} training split of {data.name!r} has only {num_classes} classes"
            )

    _typed_options(models, model.name, model.options)
    try:
        check_backbone(model, info.input_shape)
    except ValueError as error:
        if str(error).startswith(("model.", "data.")):
            raise
        raise _named("model.name", error) from None

    objective_options = _typed_options(objectives, objective.name, objective.options)
    if objectives.traits(objective.name).is_fixed:  # a polytope head: d must hold it
        needed = polytope_dim(objectives.get(objective.name).kind, num_classes)
        if model.embedding_dim < needed:
            raise ValueError(
                f"model.embedding_dim: {model.embedding_dim} is too small for a "
                f"{objective.name} head with {num_classes} classes; it needs at least "
                f"{needed} dimensions"
            )
    try:
        if objective.kind == "head":
            create_head(objective.name, model.embedding_dim, num_classes, **objective_options)
        else:
            create_loss(objective.name, **objective_options)
    except ValueError as error:  # option errors already name objective.options.<option>
        raise _named("objective.options", error) from None

    if regularizers is not None:
        options = _typed_options(regularizers, regularizer.name, regularizer.options)
        try:
            create_regularizer(regularizer.name, model.embedding_dim, num_classes, **options)
        except ValueError as error:
            raise _named("regularizer.options", error) from None
