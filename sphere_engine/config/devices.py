"""The rule of ``training.devices``: the global batch splits evenly across the processes.

Each process trains on an equal, contiguous slice of the configured batch (P×K: P/N
classes of K samples each), so the global batch, and every statistic gathered over
it, is the one a single process would see.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sphere_engine.config.run_config import RunConfig


def check_device_split(config: RunConfig) -> None:
    """``ValueError`` naming ``training.devices`` when the batch does not split evenly."""
    devices, data = config.training.devices, config.data
    if devices == 1:
        return
    if data.samples_per_class:
        classes = data.batch_size // data.samples_per_class
        if classes % devices:
            raise ValueError(
                f"training.devices: {devices} does not divide the {classes} classes of a "
                f"P×K batch (data.batch_size {data.batch_size} / data.samples_per_class "
                f"{data.samples_per_class}); each device takes an equal share of the classes"
            )
    elif data.batch_size % devices:
        raise ValueError(
            f"training.devices: {devices} does not divide data.batch_size {data.batch_size}; "
            "each device takes an equal share of the batch"
        )
