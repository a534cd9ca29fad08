"""Checks of a run config against the registries, run before any training starts.

``RunConfig.from_dict`` calls ``check_components``: registry names, option names and
types, and the combinations that only make sense with the dataset's class count (P×K
batches, polytope dimensions). Losses, heads and regularisers are cheap to build, so
they are built once here: their own range checks (scale > 0, margin ≥ 0, ...) then fire
up front too.
"""

from __future__ import annotations

from typing import Any

from sphere_engine.config import FIXED_HEADS, RunConfig, coerce_value
from sphere_engine.registry import Registry


def _check_options(
    registry: Registry, name: str, options: dict[str, Any], field: str
) -> dict[str, Any]:
    registry.get(name)  # unknown name → ValueError listing the known ones
    registry.check_kwargs(name, options, field)
    params = registry.params(name)
    return {
        key: coerce_value(value, params[key].annotation, f"{field}.{key}")
        for key, value in options.items()
    }


def _named(field: str, error: ValueError) -> ValueError:
    message = str(error)
    return ValueError(message if message.startswith(field) else f"{field}: {message}")


def check_components(config: RunConfig) -> None:
    """Raise ``ValueError`` naming the field for anything the registries reject."""
    from sphere_engine.data import DATASETS, dataset_info
    from sphere_engine.heads import HEADS, create_head, polytope_dim
    from sphere_engine.losses import LOSSES, create_loss
    from sphere_engine.models import MODELS
    from sphere_engine.regularizers import REGULARIZERS, create_regularizer

    data, model, objective, regularizer = (
        config.data,
        config.model,
        config.objective,
        config.regularizer,
    )
    try:
        DATASETS.get(data.name)
    except ValueError as error:
        raise _named("data.name", error) from None
    data.options = _check_options(DATASETS, data.name, data.options, "data.options")
    try:
        info = dataset_info(data.name, root=data.root, split=data.split, **data.options)
    except ValueError as error:
        raise _named("data", error) from None
    num_classes = info.num_classes_train

    if data.samples_per_class:
        classes_per_batch = data.batch_size // data.samples_per_class
        if classes_per_batch > num_classes:
            raise ValueError(
                f"data.batch_size: {data.batch_size} / samples_per_class "
                f"{data.samples_per_class} = {classes_per_batch} classes per batch, but the "
                f"{data.split} training split of {data.name!r} has only {num_classes} classes"
            )

    try:
        MODELS.get(model.name)
    except ValueError as error:
        raise _named("model.name", error) from None
    model.options = _check_options(MODELS, model.name, model.options, "model.options")

    registry = HEADS if objective.kind == "head" else LOSSES
    try:
        registry.get(objective.name)
    except ValueError as error:
        raise _named("objective.name", error) from None
    objective.options = _check_options(
        registry, objective.name, objective.options, "objective.options"
    )
    if objective.kind == "head":
        if objective.name in FIXED_HEADS:
            needed = polytope_dim(objective.name, num_classes)
            if model.embedding_dim < needed:
                raise ValueError(
                    f"model.embedding_dim: {model.embedding_dim} is too small for a "
                    f"{objective.name} head with {num_classes} classes; it needs at least "
                    f"{needed} dimensions"
                )
        try:
            create_head(objective.name, model.embedding_dim, num_classes, **objective.options)
        except ValueError as error:
            raise _named("objective.options", error) from None
    else:
        try:
            create_loss(objective.name, **objective.options)
        except ValueError as error:
            raise _named("objective.options", error) from None

    if regularizer.name != "none":
        try:
            REGULARIZERS.get(regularizer.name)
        except ValueError as error:
            raise _named("regularizer.name", error) from None
        regularizer.options = _check_options(
            REGULARIZERS, regularizer.name, regularizer.options, "regularizer.options"
        )
        try:
            create_regularizer(
                regularizer.name, model.embedding_dim, num_classes, **regularizer.options
            )
        except ValueError as error:
            raise _named("regularizer.options", error) from None
