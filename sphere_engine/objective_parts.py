"""``build_objective_parts``: the regulariser, head and loss a config names (the
objective's parts), built in one place for validation (which builds them to run their
option checks) and training (``build_objective``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from torch import nn

from sphere_engine.config import ConfigError, RunConfig, coerce_value
from sphere_engine.registry import Registry


@dataclass
class ObjectiveParts:
    """The built objective parts. ``loss`` owns ``head`` and ``regularizer``."""

    loss: nn.Module
    head: nn.Module | None
    regularizer: nn.Module | None


def typed_options(registry: Registry[Any], name: str, options: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``options`` with names and types checked (ints widened to floats)."""
    registry.check_kwargs(name, options)
    params = registry.params(name)
    field = registry.options_field
    return {
        key: coerce_value(value, params[key].annotation, f"{field}.{key}")
        for key, value in options.items()
    }


def _refused(field: str, error: ValueError) -> ConfigError:
    """``error``, raised building the component ``field`` configures, as a ``ConfigError``
    under ``field``: a ``ConfigError`` keeps its own path (prefixed when it names only an
    option), any other refusal is about ``field`` itself."""
    if not isinstance(error, ConfigError):
        return ConfigError(field, str(error))
    if error.path == field or error.path.startswith(f"{field}."):
        return error
    return error.under(field)


def build_objective_parts(config: RunConfig, num_classes: int) -> ObjectiveParts:
    """Loss (or head + cross-entropy) and regulariser of ``config`` for ``num_classes``
    training classes; a rejected option raises ``ConfigError`` naming its field."""
    from sphere_engine.heads import HEADS
    from sphere_engine.losses import LOSSES, ClassifierLoss
    from sphere_engine.regularizers import REGULARIZERS

    embedding_dim = config.model.embedding_dim
    regularizer = None
    if config.regularizer.name != "none":
        settings = config.regularizer
        options = typed_options(REGULARIZERS, settings.name, settings.options)
        try:
            regularizer = REGULARIZERS.create(settings.name, embedding_dim, num_classes, **options)
        except ValueError as error:
            raise _refused("regularizer.options", error) from None
    composition = {
        "embedding_regularizer": regularizer,
        "embedding_reg_weight": config.regularizer.weight,
    }
    objective = config.objective
    registry = HEADS if objective.kind == "head" else LOSSES
    options = typed_options(registry, objective.name, objective.options)
    try:
        if objective.kind == "head":
            head = HEADS.create(objective.name, embedding_dim, num_classes, **options)
            return ObjectiveParts(ClassifierLoss(head, **composition), head, regularizer)
        loss = LOSSES.create(objective.name, **composition, **options)
    except ValueError as error:  # option errors already name objective.options.<option>
        raise _refused("objective.options", error) from None
    return ObjectiveParts(loss, None, regularizer)
