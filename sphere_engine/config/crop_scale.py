"""``data.crop_scale``: the area range of the training random-resized crop, checked once.

The same rule serves the config field and the benchmark datasets' ``crop_scale``
option, so both refuse a bad range with the same one-line message (an ``OptionError``,
which the dataset registry reports under ``data.options``). Standard library only
(imported by the config and by the data pipeline).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sphere_engine.config.option_checks import OptionError

#: torchvision's RandomResizedCrop default: what every run used before the field existed.
DEFAULT_CROP_SCALE: tuple[float, float] = (0.08, 1.0)
RULE = "[low, high] with 0 < low <= high <= 1 (fractions of the image's area; default [0.08, 1.0])"


def check_crop_scale(value: Sequence[Any], path: str) -> tuple[float, float]:
    """``(low, high)`` if ``value`` is two numbers with 0 < low ≤ high ≤ 1, else an
    ``OptionError`` (a ``ConfigError``) on ``path``."""
    numbers = [v for v in value if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(value) != 2 or len(numbers) != 2 or not 0 < numbers[0] <= numbers[1] <= 1:
        raise OptionError(path, list(value), RULE)
    return float(numbers[0]), float(numbers[1])
