"""The rule of ``training.devices``: the global batch splits evenly across the processes.

Each process trains on an equal, contiguous slice of the configured batch (P×K: P/N
classes of K samples each), so the global batch, and every statistic gathered over
it, is the one a single process would see.
"""

from __future__ import annotations

from sphere_engine.config.config_error import ConfigError
from sphere_engine.config.data_section import DataConfig


def check_device_split(devices: int, data: DataConfig) -> None:
    """``ConfigError`` about ``training.devices`` when the batch of ``data`` does not
    split evenly across ``devices`` processes."""
    if devices == 1:
        return
    if data.samples_per_class:
        classes = data.batch_size // data.samples_per_class
        if classes % devices:
            raise ConfigError(
                "training.devices",
                f"{devices} does not divide the {classes} classes of a P×K batch "
                f"(data.batch_size {data.batch_size} / data.samples_per_class "
                f"{data.samples_per_class}); each device takes an equal share of the classes",
                related=["data.batch_size", "data.samples_per_class"],
            )
    elif data.batch_size % devices:
        raise ConfigError(
            "training.devices",
            f"{devices} does not divide data.batch_size {data.batch_size}; "
            "each device takes an equal share of the batch",
            related=["data.batch_size"],
        )
