"""What ``Run``'s calls accept: numbers, counts, arrays and images, checked with a
one-line error naming the argument."""

from __future__ import annotations

import numbers
from typing import Any


def count(name: str, value: Any) -> float:
    """A count given as a number or as a boolean mask (its number of True entries)."""
    if hasattr(value, "sum") and getattr(value, "ndim", 0) > 0:
        value = value.sum()
    return number(name, value)


def number(name: str, value: Any) -> float:
    if type(value) is float:  # the common case (``loss.item()``), without the ABC checks
        return value
    if hasattr(value, "item") and getattr(value, "ndim", 0) == 0:
        value = value.item()  # a 0-dim tensor or numpy scalar
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"metric {name!r} must be a number, got {value!r}")
    return float(value)  # NaN is kept: a gap in the series, as in the engine


def host_array(values: Any) -> Any:
    """An array or tensor as a NumPy array on the host."""
    import numpy as np

    if hasattr(values, "detach"):
        values = values.detach().cpu().numpy()
    return np.asarray(values)


def similarities(name: str, values: Any) -> Any:
    """``log_mining``'s pair cosines (any shape) as a flat float64 array."""
    import numpy as np

    if values is None:
        return np.zeros(0)
    array = host_array(values)
    if not np.issubdtype(array.dtype, np.number):
        raise ValueError(f"log_mining: {name} must be numbers (cosines); got {array.dtype}")
    return array.astype(np.float64).reshape(-1)


def image_array(images: Any) -> Any:
    """uint8 images as n × h × w (× C); a tensor n × C × h × w is turned channels-last."""
    array = host_array(images)
    if hasattr(images, "detach") and array.ndim == 4 and array.shape[1] in (1, 3):
        array = array.transpose(0, 2, 3, 1)
    return array
