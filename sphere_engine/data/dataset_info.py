"""What validation needs to know about a dataset without loading it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DatasetInfo:
    """Class counts and the shape of one input sample.

    ``input_shape`` is (channels, height, width) for images and (features,) for vectors.
    """

    num_classes_train: int
    num_classes_test: int
    input_shape: tuple[int, ...]
