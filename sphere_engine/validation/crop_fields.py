"""``data.crop_scale`` and ``data.resize`` into the dataset options, for the datasets
that take them.

Only the benchmarks read from their official files resize and crop (their
``crop_scale`` and ``resize`` options); elsewhere a value other than the default would
change nothing, so it is refused rather than ignored. A default adds no option, so a
run stored without the fields builds its dataset exactly as before.
"""

from __future__ import annotations

from typing import Any

from sphere_engine.config import ConfigError
from sphere_engine.config.crop_scale import DEFAULT_CROP_SCALE
from sphere_engine.config.data_section import DataConfig

#: Each field with the value that passes no option (the pipeline's behaviour before it).
CROP_FIELDS: dict[str, Any] = {"crop_scale": list(DEFAULT_CROP_SCALE), "resize": 0}


def _plain(value: Any) -> Any:
    return [float(v) for v in value] if isinstance(value, (list, tuple)) else value


def with_crop_fields(data: DataConfig, options: dict[str, Any], params: Any) -> dict[str, Any]:
    """``options`` with each of ``CROP_FIELDS`` set from ``data`` when it is not the
    default; ``ConfigError`` about the field where the dataset (its ``params``) has no
    such option or ``data.options`` says otherwise."""
    options = dict(options)
    for name, default in CROP_FIELDS.items():
        chosen = _plain(getattr(data, name))
        if chosen == default:
            continue
        if name not in params:
            raise ConfigError(
                f"data.{name}",
                f"dataset {data.name!r} does not resize and crop its images (the benchmarks "
                f"read from their official files do); leave the default {default}",
            )
        given = options.get(name)
        if given is not None and _plain(given) != chosen:
            raise ConfigError(
                f"data.{name}",
                f"{chosen} contradicts data.options.{name} {_plain(given)}; set one of them",
                related=[f"data.options.{name}"],
            )
        options[name] = chosen
    return options
