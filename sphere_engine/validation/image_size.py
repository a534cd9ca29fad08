"""``data.image_size``: the side images are resized to, resolved against the backbone
(and ``data.crop_scale`` / ``data.resize``, the crops' settings, passed on beside it).

Datasets read from image files take an ``image_size`` option; ``data.image_size``
sets it for them, and when it is 0 the backbone's default (227 bninception, 224 other
ImageNet backbones) applies, else the dataset's own default. The registries are
imported inside the function, so this module is cheap to import.
"""

from __future__ import annotations

from typing import Any

from sphere_engine.config import ConfigError, RunConfig
from sphere_engine.validation.crop_fields import with_crop_fields


def resolved_data_options(config: RunConfig) -> dict[str, Any]:
    """``data.options`` with ``image_size`` (and the crop fields) resolved;
    ``ConfigError`` about ``data.image_size`` for a size on a fixed-size dataset or below
    the backbone's minimum, about ``data.resize`` below the crop's side
    (``with_crop_fields`` says what else it refuses)."""
    from sphere_engine.data import DATASETS
    from sphere_engine.models import MODELS

    data = config.data
    params = DATASETS.params(data.name)
    options = with_crop_fields(data, data.options, params)
    takes_size = "image_size" in params
    if data.image_size and not takes_size:
        raise ConfigError("data.image_size", f"dataset {data.name!r} has fixed-size inputs; set 0")
    if not takes_size:
        return options
    backbone = MODELS.get(config.model.name)
    if data.image_size:
        if options.get("image_size", data.image_size) != data.image_size:
            raise ConfigError(
                "data.image_size",
                f"{data.image_size} contradicts data.options.image_size "
                f"{options['image_size']}; set one of them",
                related=["data.options.image_size"],
            )
        options["image_size"] = data.image_size
    elif "image_size" not in options and getattr(backbone, "default_image_size", None):
        options["image_size"] = backbone.default_image_size
    side = options.get("image_size", params["image_size"].default)
    minimum = getattr(backbone, "min_image_size", 1)
    if side < minimum:
        raise ConfigError(
            "data.image_size",
            f"{side} is too small for {config.model.name}; it needs at least {minimum}",
            related=["model.name"],
        )
    if data.resize and data.resize < side:  # a centre crop larger than the image pads it
        raise ConfigError(
            "data.resize",
            f"{data.resize} is below the {side}-px crop; resize to at least the crop's side",
            related=["data.image_size"],
        )
    return options
