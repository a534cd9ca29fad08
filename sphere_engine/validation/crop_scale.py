"""``data.crop_scale`` into the dataset options, for the datasets that take it.

Only the benchmarks read from their official files random-resize-crop (their
``crop_scale`` option); elsewhere a range other than the default would change nothing,
so it is refused rather than ignored. The default adds no option, so a run without the
field builds its dataset exactly as before.
"""

from __future__ import annotations

from typing import Any

from sphere_engine.config import ConfigError
from sphere_engine.config.crop_scale import DEFAULT_CROP_SCALE
from sphere_engine.config.data_section import DataConfig


def with_crop_scale(data: DataConfig, options: dict[str, Any], takes_scale: bool) -> dict[str, Any]:
    """``options`` with ``crop_scale`` set from ``data.crop_scale`` when it is not the
    default; ``ConfigError`` about ``data.crop_scale`` where the dataset has no such crop
    or ``data.options.crop_scale`` says otherwise."""
    chosen = [float(v) for v in data.crop_scale]
    if chosen == list(DEFAULT_CROP_SCALE):
        return options
    if not takes_scale:
        raise ConfigError(
            "data.crop_scale",
            f"dataset {data.name!r} takes no random-resized crop; leave the default "
            f"{list(DEFAULT_CROP_SCALE)}",
        )
    given = options.get("crop_scale")
    if given is not None and [float(v) for v in given] != chosen:
        raise ConfigError(
            "data.crop_scale",
            f"{chosen} contradicts data.options.crop_scale {list(given)}; set one of them",
            related=["data.options.crop_scale"],
        )
    return {**options, "crop_scale": chosen}
